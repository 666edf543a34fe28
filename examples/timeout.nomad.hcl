# A batch job that would run for ten minutes but is allowed three seconds.
# When max_run_duration expires the task is killed and the allocation ends
# complete with "allocation exceeded max_run_duration"; neither the restart
# policy nor rescheduling brings it back.
job "timeout" {
  datacenters = ["*"]
  type        = "batch"

  group "sleeper" {
    max_run_duration = "3s"

    restart {
      attempts = 3
      delay    = "1s"
      mode     = "fail"
    }

    task "sleep" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "sleep 600"]
      }

      resources {
        cpu    = 100
        memory = 32
      }
    }
  }
}
