variable "datacenters" {
  type        = list(string)
  default     = ["dc1", "dc2"]
  description = "Where to run."
}

variable "count" {
  type    = number
  default = 3
}

variable "labels" {
  type    = map(string)
  default = { team = "data", tier = "gold" }
}

variable "limits" {
  type = object({
    cpu    = number
    memory = number
  })
  default = { cpu = 300, memory = "256" }
}

variable "debug" {
  type    = bool
  default = false
}

job "typed" {
  datacenters = var.datacenters
  meta        = var.labels

  group "g" {
    count = var.count

    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/app"
        args    = ["--debug=${var.debug}"]
      }
      resources {
        cpu    = var.limits.cpu
        memory = var.limits.memory
      }
    }
  }
}
