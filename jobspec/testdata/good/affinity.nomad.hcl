job "affinity" {
  affinity {
    attribute = "${node.datacenter}"
    value     = "dc1"
    weight    = 80
  }

  group "g" {
    affinity {
      attribute        = "${meta.tags}"
      set_contains_any = "ssd,nvme"
      weight           = -50
    }
    affinity {
      attribute = "${attr.kernel.version}"
      version   = ">= 5.10"
      weight    = 25
    }

    task "t" {
      driver = "raw_exec"
      affinity {
        attribute = "${node.class}"
        regexp    = "large$"
        weight    = 10
      }
      config {
        command = "/bin/true"
      }
    }
  }
}
