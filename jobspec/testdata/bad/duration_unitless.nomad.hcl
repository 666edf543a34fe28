job "x" {
  group "g" {
    task "t" {
      kill_timeout = "300"
    }
  }
}
