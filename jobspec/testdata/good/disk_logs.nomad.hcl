job "disk-logs" {
  group "g" {
    ephemeral_disk {
      size    = 1024
      sticky  = true
      migrate = true
    }

    task "t" {
      driver = "raw_exec"

      logs {
        max_files     = 3
        max_file_size = 15
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
