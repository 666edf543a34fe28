variable "image" {
  default = "app"
}

variable "replicas" {
  type    = number
  default = 1
}

job "x" {
  group "g" {
    count = var.replicas
  }
}
