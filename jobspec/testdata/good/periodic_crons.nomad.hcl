job "reports" {
  type = "batch"

  periodic {
    crons   = ["0 8 * * 1-5", "0 12 * * 6,0"]
    enabled = false
  }

  group "report" {
    task "render" {
      driver = "raw_exec"
      config {
        command = "/usr/local/bin/report"
      }
    }
  }
}
