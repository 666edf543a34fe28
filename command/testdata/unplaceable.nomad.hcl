job "unplaceable" {
  datacenters = ["*"]
  type        = "batch"

  group "big" {
    task "big" {
      driver = "mock_driver"

      config {
        run_for = "10ms"
      }

      resources {
        cpu    = 100
        memory = 10000000
      }
    }
  }
}
