job "rt-system" {
  type     = "system"
  priority = 80

  group "agent" {
    task "agent" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }

      restart {
        attempts = 5
        interval = "5m"
        delay    = "10s"
        mode     = "delay"
      }

      meta {
        role = "node-agent"
      }
    }
  }
}
