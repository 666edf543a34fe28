job "j" {
  group "g" {
    volume "data" {
      type   = "host"
      source = "a"
    }
    volume "data" {
      type   = "host"
      source = "b"
    }
    task "t" {
      driver = "raw_exec"
    }
  }
}
