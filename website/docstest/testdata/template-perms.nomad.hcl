job "web" {
  group "g" {
    task "web" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }

      template {
        data        = "port = 8080"
        destination = "local/app.conf"
        perms       = "644x"
      }
    }
  }
}
