variables {
  owner   = "platform"
  retries = 4
  tags    = ["x", "y"]
}

job "varsblock" {
  meta {
    owner = var.owner
    tags  = join(",", var.tags)
  }

  group "g" {
    restart {
      attempts = var.retries
    }

    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
