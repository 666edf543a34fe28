job "default-identity" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/true"
      }

      identity {
        env  = true
        file = true
      }
    }
  }
}
