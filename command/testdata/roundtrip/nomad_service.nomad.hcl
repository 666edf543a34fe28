job "rt-nomad-service" {
  group "web" {
    network {
      port "http" {}
    }

    service {
      name     = "rt-web"
      provider = "nomad"
      port     = "http"
      tags     = ["web"]

      check {
        type     = "http"
        path     = "/"
        interval = "10s"
        timeout  = "2s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}"]
      }
    }
  }
}
