job "constraints" {
  constraint {
    attribute = "${attr.kernel.name}"
    operator  = "="
    value     = "linux"
  }
  constraint {
    attribute = "${attr.nomad.version}"
    version   = ">= 1.6"
  }
  constraint {
    attribute = "${attr.os.version}"
    semver    = "~> 22.04"
  }
  constraint {
    attribute = "${node.class}"
    regexp    = "^gpu-.*"
  }
  constraint {
    attribute    = "${meta.zones}"
    set_contains = "a,b"
  }
  constraint {
    attribute        = "${meta.tags}"
    set_contains_any = "ssd,nvme"
  }
  constraint {
    attribute        = "${meta.features}"
    set_contains_all = "avx2,sse4"
  }
  constraint {
    distinct_hosts = true
  }
  constraint {
    distinct_property = "${meta.rack}"
    value             = "2"
  }
  constraint {
    attribute = "${attr.unique.network.ip-address}"
    is_set    = true
  }
  constraint {
    attribute  = "${meta.maintenance}"
    is_not_set = true
  }
  constraint {
    attribute = "${attr.cpu.arch}"
    operator  = "!="
    value     = "arm64"
  }

  group "g" {
    task "t" {
      driver = "raw_exec"
      constraint {
        attribute = "${attr.driver.raw_exec}"
        operator  = "is_set"
      }
      config {
        command = "/bin/true"
      }
    }
  }
}
