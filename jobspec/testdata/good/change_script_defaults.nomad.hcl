job "change-script-defaults" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }

      template {
        data        = "x"
        destination = "local/x"
        change_mode = "script"

        change_script {
          command = "/bin/true"
        }
      }
    }
  }
}
