job "rt-exec-user" {
  type = "batch"

  group "g" {
    task "t" {
      driver = "exec"
      user   = "nobody"

      config {
        command = "/bin/id"
      }

      resources {
        cores      = 1
        memory     = 64
        memory_max = 128
      }

      identity {
        env  = true
        file = true
      }
    }
  }
}
