variable "groups" {
  type = map(object({ count = number, cmd = string }))
  default = {
    api    = { count = 2, cmd = "/bin/api" }
    worker = { count = 4, cmd = "/bin/worker" }
  }
}

variable "ports" {
  default = ["http", "grpc"]
}

job "dynamic" {
  dynamic "group" {
    for_each = var.groups
    labels   = [group.key]

    content {
      count = group.value.count

      network {
        dynamic "port" {
          for_each = var.ports
          labels   = [port.value]
          content {}
        }
      }

      dynamic "constraint" {
        for_each = ["linux"]
        iterator = os
        content {
          attribute = "${attr.kernel.name}"
          value     = os.value
        }
      }

      task "main" {
        driver = "raw_exec"
        config {
          command = group.value.cmd
        }
        env {
          GROUP = group.key
        }
      }
    }
  }
}
