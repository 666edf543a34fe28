job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      identity {
        env = true
      }
      identity {
        file = true
      }
    }
  }
}
