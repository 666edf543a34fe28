job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
        mount   = "x"
        mount {
          source = "y"
        }
      }
    }
  }
}
