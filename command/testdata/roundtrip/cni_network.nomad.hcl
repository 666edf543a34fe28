job "rt-cni" {
  group "g" {
    network {
      mode = "cni/mynet"

      cni {
        args = {
          IgnoreUnknown = "true"
        }
      }
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
