# An artifact fetched into the allocation's shared directory, where every
# task of the group can read it, as Nomad's artifact documentation shows.
variable "source" {
  type    = string
  default = "https://example.com/hello.txt"
}

job "artifact-alloc-dir" {
  type = "batch"

  group "work" {
    task "fetch" {
      driver = "raw_exec"

      artifact {
        source      = var.source
        destination = "../alloc/data/hello.txt"
        mode        = "file"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "cat ${NOMAD_ALLOC_DIR}/data/hello.txt"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
