job "lonely" {
  type = "batch"

  task "solo" {
    driver = "raw_exec"
    config {
      command = "/bin/echo"
      args    = ["alone"]
    }
  }
}
