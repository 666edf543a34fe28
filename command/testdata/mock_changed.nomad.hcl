job "mock" {
  datacenters = ["*"]
  type        = "batch"

  group "work" {
    max_run_duration = "45s"

    task "work" {
      driver = "mock_driver"

      config {
        run_for = "10ms"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
