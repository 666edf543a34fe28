job "timeout" {
  type        = "batch"
  datacenters = ["dc1"]

  group "work" {
    max_run_duration = "3s"

    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
