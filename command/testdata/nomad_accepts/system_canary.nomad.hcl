# A system job with canaries, as in Nomad's update block documentation.
job "system-canary" {
  type = "system"

  update {
    max_parallel     = 1
    canary           = 1
    auto_promote     = true
    min_healthy_time = "5s"
    healthy_deadline = "1m"
  }

  group "agent" {
    task "agent" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
