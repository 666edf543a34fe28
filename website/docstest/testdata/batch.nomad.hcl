# A job with a misspelt count (website/jobspec.md).
job "batch" {
  group "g" {
    cuont = 2
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
