job "nightly-backup" {
  type = "batch"

  periodic {
    cron             = "0 3 * * *"
    prohibit_overlap = true
    time_zone        = "Europe/Paris"
  }

  group "backup" {
    task "dump" {
      driver = "raw_exec"
      config {
        command = "/usr/local/bin/backup"
      }
    }
  }
}
