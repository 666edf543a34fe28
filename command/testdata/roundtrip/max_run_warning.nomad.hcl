# A batch group warned with SIGUSR1 one minute before its max_run_duration.
job "max-run-warning" {
  type = "batch"

  group "train" {
    max_run_duration = "2h"

    max_run_duration_warning {
      before = "1m"
      signal = "SIGUSR1"
    }

    task "train" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
    }
  }
}
