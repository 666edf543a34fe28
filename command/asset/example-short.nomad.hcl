job "example" {
  type = "batch"

  group "work" {
    max_run_duration = "10m"

    task "hello" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"hello from $NOMAD_JOB_NAME, allocation $NOMAD_ALLOC_ID\"; sleep 1"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
