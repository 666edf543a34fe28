job "x" {
  group "g" {
    max_runtime = "10m"
  }
}
