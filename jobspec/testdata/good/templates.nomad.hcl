job "templated" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      template {
        destination = "local/app.env"
        env         = true
        data        = <<-EOT
          NODE={{ env "node.unique.name" }}
          DIR=${NOMAD_TASK_DIR}
        EOT
      }

      template {
        source        = "local/in.tpl"
        destination   = "secrets/out"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        perms         = "0600"
        splay         = "10s"
        wait {
          min = "2s"
          max = "10s"
        }
      }

      config {
        command = "/bin/app"
      }
    }
  }
}
