job "rich" {
  datacenters = ["*"]
  type        = "batch"
  priority    = 60
  meta = { owner = "ops", tier = "2" }
  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }
  affinity {
    attribute = "${node.datacenter}"
    value     = "dc1"
    weight    = 50
  }
  spread {
    attribute = "${node.datacenter}"
    target "dc1" { percent = 100 }
  }
  reschedule {
    attempts  = 1
    interval  = "1h"
    unlimited = false
  }
  group "g" {
    count = 2
    max_run_duration = "1h"
    meta = { role = "worker" }
    constraint {
      attribute = "${attr.cpu.arch}"
      operator  = "!="
      value     = "sparc"
    }
    restart {
      attempts = 1
      delay    = "5s"
      mode     = "fail"
    }
    ephemeral_disk { size = 300 }
    network {
      port "http" {}
    }
    task "main" {
      driver = "mock_driver"
      config { run_for = "1s" }
      env = { A = "1" }
      meta = { x = "y" }
      resources {
        cpu    = 50
        memory = 32
      }
      logs {
        max_files     = 2
        max_file_size = 5
      }
      template {
        data        = "hello {{ env \"NOMAD_TASK_NAME\" }}"
        destination = "local/out.txt"
      }
      constraint {
        attribute = "${attr.os.name}"
        operator  = "is_set"
      }
      kill_timeout = "3s"
    }
    task "side" {
      driver = "mock_driver"
      config { run_for = "1s" }
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
