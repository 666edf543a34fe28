job "rt-sysbatch" {
  type = "sysbatch"

  constraint {
    attribute = "${attr.os.name}"
    operator  = "!="
    value     = "windows"
  }

  group "g" {
    constraint {
      distinct_hosts = true
    }

    constraint {
      attribute = "${meta.rack}"
      operator  = "is_not_set"
    }

    affinity {
      attribute = "${attr.kernel.version}"
      operator  = "version"
      value     = ">= 4.0"
      weight    = -30
    }

    task "t" {
      driver = "raw_exec"

      constraint {
        attribute = "${attr.driver.raw_exec}"
        value     = "1"
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
