job "fs" {
  meta {
    exists  = fileexists("files/motd.txt")
    missing = fileexists("files/nope.txt")
    base    = basename("/etc/nomad.d/agent.hcl")
    dir     = dirname("/etc/nomad.d/agent.hcl")
    set     = join(",", fileset(".", "files/*.txt"))
    b64     = filebase64("files/motd.txt")
  }

  group "g" {
    task "t" {
      driver = "raw_exec"
      template {
        data        = file("files/motd.txt")
        destination = "local/motd"
      }
      config {
        command = "/bin/cat"
      }
    }
  }
}
