job "rt-service-rolling" {
  type = "service"

  update {
    max_parallel      = 2
    health_check      = "task_states"
    min_healthy_time  = "5s"
    healthy_deadline  = "2m"
    progress_deadline = "5m"
    auto_revert       = true
    stagger           = "10s"
  }

  migrate {
    max_parallel     = 1
    health_check     = "task_states"
    min_healthy_time = "5s"
    healthy_deadline = "1m"
  }

  group "web" {
    count          = 3
    shutdown_delay = "5s"

    restart {
      attempts = 3
      interval = "10m"
      delay    = "20s"
      mode     = "delay"
    }

    reschedule {
      delay          = "30s"
      delay_function = "exponential"
      max_delay      = "10m"
      unlimited      = true
    }

    ephemeral_disk {
      size = 500
    }

    scaling {
      min     = 1
      max     = 10
      enabled = true
    }

    task "server" {
      driver       = "raw_exec"
      kill_timeout = "20s"
      kill_signal  = "SIGINT"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      logs {
        max_files     = 5
        max_file_size = 20
      }
    }
  }
}
