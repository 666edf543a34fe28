# max_run_duration on a service job: the parser points at the attribute.
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
