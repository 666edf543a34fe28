# Fields no other file of the round trip sets.
job "rt-misc" {
  type = "service"

  group "g" {
    update {
      max_parallel     = 1
      health_check     = "task_states"
      min_healthy_time = "5s"
      healthy_deadline = "1m"
    }

    restart {
      attempts         = 2
      interval         = "5m"
      delay            = "15s"
      mode             = "fail"
      render_templates = true
    }

    scaling {
      min = 1
      max = 4

      policy {
        cooldown            = "1m"
        evaluation_interval = "30s"

        check "cpu" {
          source = "prometheus"
          query  = "avg(cpu)"

          strategy "target-value" {
            target = 70
          }
        }
      }
    }

    volume "data" {
      type   = "host"
      source = "shared-data"
    }

    task "t" {
      driver = "raw_exec"

      artifact {
        source   = "https://example.com/tool"
        mode     = "file"
        insecure = true
      }

      template {
        source      = "local/app.conf.tpl"
        destination = "local/app.conf"
      }

      volume_mount {
        volume           = "data"
        destination      = "/data"
        propagation_mode = "private"
      }

      logs {
        enabled       = true
        max_files     = 3
        max_file_size = 5
      }

      identity {
        name = "default"
        aud  = ["nomadproject.io"]
        env  = true
      }

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
