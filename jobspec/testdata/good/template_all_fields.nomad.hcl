job "every-template-field" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      artifact {
        source      = "git::https://example.com/repo.git"
        destination = "local/repo"
        mode        = "dir"
        options {
          ref = "v1.2.0"
        }
      }

      artifact {
        source      = "https://example.com/tool.tar.gz"
        destination = "local/tool.tar.gz"
        mode        = "file"
        chown       = true
        options {
          archive = false
        }
        headers {
          Authorization = "Bearer ${NOMAD_META_token}"
          X-Trace       = "1"
        }
      }

      template {
        data                 = "[[ env \"NOMAD_TASK_NAME\" ]]"
        destination          = "local/out"
        left_delimiter       = "[["
        right_delimiter      = "]]"
        error_on_missing_key = true
        once                 = true
        uid                  = 1000
        gid                  = 1000
        change_mode          = "script"
        change_script {
          command       = "/bin/reload"
          args          = ["-f"]
          timeout       = "5s"
          fail_on_error = true
        }
      }

      config {
        command = "/bin/app"
      }
    }
  }
}
