job "web" {
  type = "service"

  group "web" {
    max_run_duration = "1h"

    task "web" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
