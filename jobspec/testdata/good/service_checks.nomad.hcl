job "api" {
  group "api" {
    network {
      port "grpc" {}
      port "admin" {
        static       = 9000
        host_network = "private"
      }
    }

    task "api" {
      driver = "exec"

      service {
        name     = "api-grpc"
        port     = "grpc"
        tags     = ["grpc"]
        provider = "consul"

        check {
          type     = "grpc"
          interval = 5000000000
          timeout  = "1s"
          check_restart {
            limit = 3
            grace = "30s"
          }
        }
      }

      service {
        name = "api-admin"
        port = "admin"
        meta = {
          path = "/admin"
        }
      }

      config {
        command = "/bin/api"
      }
    }
  }
}
