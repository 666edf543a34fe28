# Each task keeps up to 200 MB of logs in a 300 MB ephemeral disk. Nomad
# holds every task's logs to the disk on its own, so the two tasks'
# 400 MB together are fine.
job "logs-per-task" {
  type = "batch"

  group "pair" {
    ephemeral_disk {
      size = 300
    }

    task "producer" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo produced"]
      }

      logs {
        max_files     = 10
        max_file_size = 20
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }

    task "consumer" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo consumed"]
      }

      logs {
        max_files     = 10
        max_file_size = 20
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
