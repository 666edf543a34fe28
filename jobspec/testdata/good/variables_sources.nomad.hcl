variable "image" {
  type    = string
  default = "app:default"
}

variable "replicas" {
  type    = number
  default = 1
}

variable "zones" {
  type    = list(string)
  default = ["a"]
}

job "sources" {
  group "g" {
    count = var.replicas

    task "t" {
      driver = "docker"
      config {
        image = var.image
        zones = var.zones
      }
    }
  }
}
