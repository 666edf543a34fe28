job "spread" {
  spread {
    attribute = "${node.datacenter}"
    weight    = 100

    target "us-east1" {
      percent = 60
    }
    target "us-west1" {
      percent = 40
    }
  }

  group "g" {
    count = 10
    spread {
      attribute = "${meta.rack}"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
