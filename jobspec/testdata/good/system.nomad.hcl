job "node-exporter" {
  datacenters = ["*"]
  type        = "system"

  group "exporter" {
    network {
      port "metrics" {
        static = 9100
      }
    }

    task "exporter" {
      driver = "exec"

      config {
        command = "/usr/local/bin/node_exporter"
        args    = ["--web.listen-address=:${NOMAD_PORT_metrics}"]
      }

      resources {
        cores  = 1
        memory = 64
      }
    }
  }
}
