job "x" {
  group "g" {
    shutdown_delay = true
  }
}
