job "x" {
  group "g" {
    task "t" {
      lifecycle {
        sidecar = true
      }
    }
  }
}
