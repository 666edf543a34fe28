job "meta-blocks" {
  meta {
    owner = "team-a"
    cost  = 42
  }

  group "g" {
    meta {
      tier = "backend"
    }

    task "t" {
      driver = "raw_exec"

      meta {
        role = "primary"
      }

      env {
        LOG_LEVEL = "debug"
        PORT      = 8080
        NODE      = "${node.unique.name}"
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
