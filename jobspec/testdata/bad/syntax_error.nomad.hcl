job "broken" {
  group "g" {
    count = 
  }
}
