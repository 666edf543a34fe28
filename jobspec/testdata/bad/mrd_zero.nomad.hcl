job "zero" {
  type = "batch"

  group "g" {
    max_run_duration = "0s"

    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
