variable "env" {
  default = "staging"
}

locals {
  full_name = "${local.prefix}-${var.env}"
  prefix    = "svc"
  common    = { owner = "ops", env = var.env }
  all_meta  = merge(local.common, { name = local.full_name })
}

job "locals" {
  name = local.full_name
  meta = local.all_meta

  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
