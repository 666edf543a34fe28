job "x" {
  group "g" {
    restart {
      attempts = 1
    }
    restart {
      attempts = 2
    }
  }
}
