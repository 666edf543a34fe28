job "rt-host-volume" {
  group "g" {
    volume "data" {
      type      = "host"
      source    = "shared-data"
      read_only = true
    }

    task "t" {
      driver = "raw_exec"

      volume_mount {
        volume      = "data"
        destination = "/data"
        read_only   = true
      }

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
