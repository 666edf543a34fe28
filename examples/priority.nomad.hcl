# A high-priority batch job whose message is a variable:
#   nomadq job run -var 'message=urgent work' examples/priority.nomad.hcl
variable "message" {
  type        = string
  default     = "high priority work"
  description = "What the job prints."
}

job "priority" {
  datacenters = ["*"]
  type        = "batch"
  priority    = 80

  group "work" {
    max_run_duration = "1m"

    task "work" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo '${var.message}'; sleep 2"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
