variable "priority" {
  type    = number
  default = 60

  validation {
    condition     = var.priority >= 1 && var.priority <= 100
    error_message = "priority must be between 1 and 100"
  }

  validation {
    condition     = floor(var.priority) == var.priority
    error_message = "priority must be a whole number"
  }
}

variable "env" {
  type = string

  validation {
    condition     = contains(["dev", "prod"], var.env)
    error_message = "env must be dev or prod"
  }
}

job "validated" {
  priority = var.priority
  meta {
    env = var.env
  }

  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
