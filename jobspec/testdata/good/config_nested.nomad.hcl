job "docker-nested" {
  group "g" {
    task "app" {
      driver = "docker"

      config {
        image      = "redis:7"
        privileged = false
        shm_size   = 67108864
        cpu_ratio  = 0.5
        labels = {
          team = "cache"
        }
        args = ["--port", "6379"]

        mount {
          type   = "bind"
          source = "local/redis.conf"
          target = "/etc/redis.conf"
        }

        mount {
          type     = "tmpfs"
          target   = "/scratch"
          readonly = true
        }

        logging {
          type = "syslog"
          config {
            tag = "redis"
          }
        }

        auth "registry" {
          username = "u"
        }
      }
    }
  }
}
