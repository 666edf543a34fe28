job "web" {
  datacenters = ["dc1"]

  group "web" {
    max_run_duration = "10m"

    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
