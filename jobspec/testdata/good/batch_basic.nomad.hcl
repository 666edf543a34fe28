job "batch-basic" {
  datacenters = ["dc1"]
  type        = "batch"

  group "work" {
    count            = 2
    max_run_duration = "10m"

    task "run" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "${NOMAD_TASK_DIR}/run.sh --alloc ${NOMAD_ALLOC_ID}"]
      }

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
