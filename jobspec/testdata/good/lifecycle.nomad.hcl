job "etl" {
  type = "batch"

  group "pipeline" {
    max_run_duration = "30m"

    task "fetch" {
      driver = "raw_exec"
      lifecycle {
        hook = "prestart"
      }
      config {
        command = "/bin/fetch"
      }
    }

    task "proxy" {
      driver = "raw_exec"
      lifecycle {
        hook    = "poststart"
        sidecar = true
      }
      config {
        command = "/bin/proxy"
      }
    }

    task "transform" {
      driver = "raw_exec"
      leader = true
      config {
        command = "/bin/transform"
      }
    }

    task "upload" {
      driver = "raw_exec"
      lifecycle {
        hook = "poststop"
      }
      config {
        command = "/bin/upload"
      }
    }
  }
}
