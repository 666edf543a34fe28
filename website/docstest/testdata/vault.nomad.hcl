job "x" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/true"
      }

      vault {
        policies = ["reader"]
      }
    }
  }
}
