# A realistic ~200-line job used by BenchmarkParse200LineJob.
variable "datacenters" {
  type    = list(string)
  default = ["dc1", "dc2"]
}

variable "image_tag" {
  type    = string
  default = "1.4.2"

  validation {
    condition     = strlen(var.image_tag) > 0
    error_message = "image_tag must not be empty"
  }
}

variable "api_count" {
  type    = number
  default = 3
}

locals {
  image   = "registry.example.com/shop/api:${var.image_tag}"
  labels  = { team = "shop", env = "prod" }
  workers = ["orders", "payments", "emails"]
}

job "shop" {
  datacenters = var.datacenters
  type        = "service"
  priority    = 60
  namespace   = "shop"
  meta        = local.labels

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  constraint {
    attribute = "${attr.nomad.version}"
    version   = ">= 1.6.0"
  }

  spread {
    attribute = "${node.datacenter}"
    target "dc1" {
      percent = 50
    }
    target "dc2" {
      percent = 50
    }
  }

  update {
    max_parallel      = 1
    min_healthy_time  = "10s"
    healthy_deadline  = "3m"
    progress_deadline = "10m"
    auto_revert       = true
    canary            = 1
  }

  group "api" {
    count          = var.api_count
    shutdown_delay = "5s"

    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
      port "metrics" {
        to = 9102
      }
    }

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    reschedule {
      delay          = "30s"
      delay_function = "exponential"
      max_delay      = "10m"
      unlimited      = true
    }

    ephemeral_disk {
      size = 300
    }

    service {
      name     = "shop-api"
      port     = "http"
      tags     = ["http", "api"]
      provider = "nomad"

      check {
        type     = "http"
        path     = "/healthz"
        interval = "10s"
        timeout  = "2s"
      }
    }

    task "api" {
      driver = "docker"

      config {
        image = local.image
        ports = ["http", "metrics"]
        args  = ["--listen", ":8080", "--node", "${node.unique.name}"]

        mount {
          type   = "bind"
          source = "local/config.yaml"
          target = "/etc/shop/config.yaml"
        }
      }

      env {
        SHOP_ENV      = "prod"
        SHOP_ALLOC_ID = "${NOMAD_ALLOC_ID}"
        SHOP_WORKERS  = join(",", local.workers)
      }

      template {
        destination = "local/config.yaml"
        data        = <<-EOT
          listen: :8080
          database: {{ key "shop/db/url" }}
          workers: ${jsonencode(local.workers)}
        EOT
      }

      resources {
        cpu        = 500
        memory     = 256
        memory_max = 512
      }

      logs {
        max_files     = 5
        max_file_size = 20
      }

      kill_timeout = "20s"
    }

    task "migrate" {
      driver = "docker"

      lifecycle {
        hook = "prestart"
      }

      config {
        image   = local.image
        command = "/app/migrate"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }

  dynamic "group" {
    for_each = local.workers
    labels   = ["worker-${group.value}"]

    content {
      count = 2

      task "worker" {
        driver = "docker"

        config {
          image   = local.image
          command = "/app/worker"
          args    = ["--queue", group.value]
        }

        affinity {
          attribute = "${node.class}"
          value     = "worker"
          weight    = 50
        }

        resources {
          cpu    = 250
          memory = 192
        }
      }
    }
  }
}
