job "multi" {
  name        = "multi-display"
  datacenters = ["dc1"]
  type        = "batch"
  priority    = 30
  all_at_once = true
  node_pool   = "gpu"

  group "a" {
    count = 1
    task "a1" {
      driver = "raw_exec"
      config {
        command = "/bin/a"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }

  group "b" {
    count = 5
    task "b1" {
      driver = "raw_exec"
      user   = "nobody"
      config {
        command = "/bin/b"
      }
    }
    task "b2" {
      driver = "raw_exec"
      config {
        command = "/bin/b2"
      }
    }
  }
}
