job "rt-templates-artifacts" {
  type = "batch"

  group "g" {
    task "t" {
      driver = "raw_exec"

      artifact {
        source      = "https://example.com/app.tar.gz"
        destination = "local/app"
        mode        = "any"

        options {
          checksum = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
        }

        headers {
          Authorization = "Bearer token"
        }
      }

      template {
        data          = "name={{ env \"NOMAD_JOB_NAME\" }}\n"
        destination   = "local/app.env"
        env           = true
        change_mode   = "noop"
        perms         = "0600"
        left_delimiter  = "[["
        right_delimiter = "]]"
      }

      template {
        data        = "{{ with nomadVar \"nomad/jobs/rt-templates-artifacts\" }}{{ .greeting }}{{ end }}"
        destination = "secrets/greeting.txt"
        change_mode = "signal"
        change_signal = "SIGHUP"
        splay       = "2s"
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
