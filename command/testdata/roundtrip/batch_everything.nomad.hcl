# A batch job using the job-level blocks nomadq honours.
job "rt-batch-everything" {
  region      = "global"
  namespace   = "default"
  type        = "batch"
  priority    = 40
  all_at_once = true
  datacenters = ["dc1", "dc2"]
  node_pool   = "default"

  meta {
    team = "data"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  affinity {
    attribute = "${node.datacenter}"
    value     = "dc1"
    weight    = 70
  }

  spread {
    attribute = "${node.datacenter}"
    weight    = 60

    target "dc1" {
      percent = 70
    }

    target "dc2" {
      percent = 30
    }
  }

  reschedule {
    attempts       = 2
    interval       = "1h"
    delay          = "10s"
    delay_function = "constant"
  }

  group "work" {
    count = 2

    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/true"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
