# A batch job with a prestart task that prepares input, a main task that
# writes a report and a poststop task that publishes it. The whole run,
# prestart and poststop included, must finish within 30 seconds.
job "report" {
  datacenters = ["*"]
  type        = "batch"

  group "report" {
    max_run_duration = "30s"

    task "prepare" {
      driver = "raw_exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo 'rows=42' > ${NOMAD_ALLOC_DIR}/input.txt"]
      }
    }

    task "render" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "cat ${NOMAD_ALLOC_DIR}/input.txt > ${NOMAD_ALLOC_DIR}/report.txt; echo rendered"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }

    task "publish" {
      driver = "raw_exec"

      lifecycle {
        hook = "poststop"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo published; cat ${NOMAD_ALLOC_DIR}/report.txt"]
      }
    }
  }
}
