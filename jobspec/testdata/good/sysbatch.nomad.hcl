job "cleanup" {
  datacenters = ["*"]
  type        = "sysbatch"
  node_pool   = "all"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "sweep" {
    max_run_duration = "5s"

    task "sweep" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/find"
        args    = ["/tmp", "-mtime", "+7", "-delete"]
      }
    }
  }
}
