job "rt-periodic" {
  type = "batch"

  periodic {
    crons            = ["*/15 * * * *", "0 3 * * *"]
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
  }

  group "g" {
    max_run_duration = "10m"

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/date"
      }
    }
  }
}
