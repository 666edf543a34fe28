job "rt-ports" {
  group "web" {
    network {
      mode = "host"

      port "http" {}

      port "admin" {
        static           = 19999
        ignore_collision = true
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}"]
      }

      env {
        ADMIN_ADDR = "${NOMAD_ADDR_admin}"
      }
    }
  }
}
