# A task resources block with disk, which older Nomad job files carry.
# Nomad 2.0 ignores it; the group's ephemeral_disk is what counts.
job "task-disk" {
  type = "batch"

  group "work" {
    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/true"
      }

      resources {
        cpu    = 100
        memory = 64
        disk   = 150
      }
    }
  }
}
