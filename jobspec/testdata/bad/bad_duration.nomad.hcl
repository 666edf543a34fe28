job "x" {
  type = "batch"

  group "g" {
    max_run_duration = "ten"
  }
}
