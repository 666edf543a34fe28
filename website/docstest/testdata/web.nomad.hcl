# A job that keeps running, for the pages whose commands need a running
# allocation (exec, signal, restart, fs, logs). Setup markers run it with
#   nomad job run -detach "$DOCS_FIXTURES/web.nomad.hcl"
job "web" {
  group "web" {
    network {
      port "http" {}
    }

    service {
      name     = "web"
      provider = "nomad"
      port     = "http"
      tags     = ["v1", "http"]
    }

    task "render" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo rendered > local/out.txt; echo rendered; trap 'echo got USR1' USR1; trap 'echo got HUP' HUP; while true; do sleep 1; done"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
