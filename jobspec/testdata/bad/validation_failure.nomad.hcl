variable "count" {
  type    = number
  default = 0

  validation {
    condition     = var.count > 0
    error_message = "count must be positive"
  }
}

job "x" {
  group "g" {
    count = var.count
  }
}
