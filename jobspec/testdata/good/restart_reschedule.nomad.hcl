job "resilient" {
  type = "service"

  reschedule {
    delay          = "30s"
    delay_function = "exponential"
    max_delay      = "1h"
    unlimited      = true
  }

  group "g" {
    restart {
      attempts = 3
      interval = "30m"
      delay    = "15s"
      mode     = "delay"
    }

    reschedule {
      attempts  = 5
      interval  = "1h30m"
      delay     = "10s"
      unlimited = false
    }

    migrate {
      max_parallel     = 2
      health_check     = "checks"
      min_healthy_time = "20s"
      healthy_deadline = "4m"
    }

    task "t" {
      driver       = "raw_exec"
      kill_timeout = "45s"
      kill_signal  = "SIGINT"

      restart {
        attempts = 1
        delay    = "5s"
      }

      config {
        command = "/bin/server"
      }
    }
  }
}
