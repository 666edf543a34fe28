job "x" {
  meta {
    motd = file("motd.txt")
  }
}
