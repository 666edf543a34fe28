job "x" {
  meta = ["a", "b"]
}
