job "rt-services" {
  group "api" {
    network {
      port "http" {}
      port "metrics" {}
    }

    service {
      name         = "rt-api"
      provider     = "nomad"
      port         = "http"
      address_mode = "host"
      tags         = ["api", "v1"]
      task         = "server"
      on_update    = "require_healthy"

      meta {
        version = "1"
      }

      check_restart {
        limit = 3
        grace = "30s"
      }

      check {
        name            = "api-http"
        type            = "http"
        protocol        = "http"
        path            = "/health"
        method          = "POST"
        body            = "{}"
        interval        = "10s"
        timeout         = "2s"
        tls_skip_verify = true

        header {
          X-Check = ["nomadq"]
        }
      }

      check {
        name     = "api-script"
        type     = "script"
        command  = "/bin/test"
        args     = ["-f", "/tmp/ready"]
        task     = "server"
        interval = "30s"
        timeout  = "5s"

        check_restart {
          limit = 2
          grace = "10s"
        }
      }
    }

    service {
      name     = "rt-api-static"
      provider = "nomad"
      cluster  = "default"
      address  = "192.0.2.10"
      port     = "http"
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}"]
      }

      service {
        name     = "rt-api-metrics"
        provider = "nomad"
        port     = "metrics"

        check {
          type         = "tcp"
          address_mode = "host"
          port         = "metrics"
          interval     = "15s"
          timeout      = "3s"
          on_update    = "ignore"
        }
      }
    }
  }
}
