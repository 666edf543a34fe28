job "rt-lifecycle" {
  type = "batch"

  group "g" {
    task "init" {
      driver = "raw_exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/true"
      }
    }

    task "sidecar" {
      driver = "raw_exec"

      lifecycle {
        hook    = "poststart"
        sidecar = true
      }

      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
    }

    task "main" {
      driver = "raw_exec"
      leader = true

      config {
        command = "/bin/true"
      }
    }

    task "cleanup" {
      driver = "raw_exec"

      lifecycle {
        hook = "poststop"
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
