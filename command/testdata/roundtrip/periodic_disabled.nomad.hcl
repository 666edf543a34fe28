job "rt-periodic-disabled" {
  type = "batch"

  periodic {
    cron    = "@daily"
    enabled = false
  }

  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/date"
      }
    }
  }
}
