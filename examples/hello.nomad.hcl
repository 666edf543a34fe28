# A one-shot batch job: prints a greeting and exits.
job "hello" {
  datacenters = ["*"]
  type        = "batch"

  group "hello" {
    task "hello" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello; sleep 1"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
