job "x" {
  meta {
    who = upper("a", "b")
  }
}
