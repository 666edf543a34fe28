job "meta-attrs" {
  meta = {
    owner = "team-b"
    "dotted.key" = "yes"
  }

  group "g" {
    meta = { tier = "frontend" }

    task "t" {
      driver = "raw_exec"

      meta = {
        role = "replica"
      }

      env = {
        LOG_LEVEL = "info"
        WORKERS   = 4
      }

      env {
        EXTRA = "block"
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
