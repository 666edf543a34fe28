job "ports-volumes" {
  datacenters = ["dc1"]

  group "web" {
    shutdown_delay = "3s"

    network {
      mode = "host"
      port "http" {}
      port "admin" {
        static = 8080
      }
    }

    volume "certs" {
      type      = "host"
      source    = "tls"
      read_only = true
    }

    task "server" {
      driver         = "raw_exec"
      shutdown_delay = "1s"
      kill_signal    = "SIGUSR1"
      kill_timeout   = "20s"

      config {
        command = "/bin/server"
      }

      volume_mount {
        volume      = "certs"
        destination = "/etc/tls"
        read_only   = true
      }

      logs {
        disabled = true
      }

      resources {
        cores      = 2
        memory     = 128
        memory_max = 256
      }
    }
  }
}
