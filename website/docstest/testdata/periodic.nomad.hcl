# A periodic job named report, for the pages that force a launch of it.
job "report" {
  type = "batch"

  periodic {
    crons            = ["0 3 * * *"]
    prohibit_overlap = true
  }

  group "report" {
    task "render" {
      driver = "raw_exec"

      config {
        command = "/bin/echo"
        args    = ["rendered"]
      }
    }
  }
}
