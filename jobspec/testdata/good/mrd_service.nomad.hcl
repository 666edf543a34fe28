# max_run_duration on a service job is rejected by job validation, not by the
# parser; the parser must keep the value.
job "long-service" {
  type = "service"

  group "g" {
    max_run_duration = "1h"

    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/server"
      }
    }
  }
}
