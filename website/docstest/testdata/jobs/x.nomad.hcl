# A job whose max_run_duration is not a duration (website/jobspec.md).
job "x" {
  type = "batch"
  group "g" {
    max_run_duration = "ten"
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
