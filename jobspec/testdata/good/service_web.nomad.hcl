job "web" {
  region      = "eu"
  namespace   = "frontend"
  datacenters = ["dc1", "dc2"]
  type        = "service"
  priority    = 70

  update {
    max_parallel      = 2
    min_healthy_time  = "15s"
    healthy_deadline  = "5m"
    progress_deadline = "10m"
    auto_revert       = true
    canary            = 1
  }

  group "frontend" {
    count          = 3
    shutdown_delay = "8s"

    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
      port "https" {
        static = 443
        to     = 8443
      }
    }

    service {
      name     = "web"
      port     = "http"
      tags     = ["public", "v2"]
      provider = "nomad"

      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
      }
    }

    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:1.27"
        ports = ["http", "https"]
      }

      resources {
        cpu        = 500
        memory     = 256
        memory_max = 512
      }
    }
  }
}
