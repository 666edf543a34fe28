job "rt-bridge" {
  group "web" {
    network {
      mode     = "bridge"
      hostname = "web-${NOMAD_ALLOC_INDEX}"

      port "http" {
        to = 8080
      }

      dns {
        servers  = ["1.1.1.1"]
        searches = ["internal"]
        options  = ["ndots:2"]
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "8080"]
      }
    }
  }
}
