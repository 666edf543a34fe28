job "x" {
  group "g" {
    task "t" {
      restart {
        delay = "ten minutes"
      }
    }
  }
}
