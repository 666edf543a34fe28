job "x" {
  group "g" {
    taks "t" {
      driver = "raw_exec"
    }
  }
}
