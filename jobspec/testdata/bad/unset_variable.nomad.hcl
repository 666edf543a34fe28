variable "region" {
  type = string
}

job "x" {
  region = var.region
}
