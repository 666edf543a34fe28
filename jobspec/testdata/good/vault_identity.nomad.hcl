job "secure" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      vault {
        role = "app"
      }

      identity {
        env  = true
        file = true
      }

      identity {
        name = "consul"
        aud  = ["consul.io"]
        ttl  = "1h"
      }

      config {
        command = "/bin/true"
      }
    }
  }
}
