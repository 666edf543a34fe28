# A sysbatch job runs once on every eligible node. Each run is limited to
# five seconds.
job "node-check" {
  datacenters = ["*"]
  type        = "sysbatch"

  group "check" {
    max_run_duration = "5s"

    task "check" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo checking ${node.unique.name}; uname -a; sleep 1"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
