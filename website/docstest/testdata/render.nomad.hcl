# The parameterized job of website/periodic-and-parameterized.md, for the
# pages that dispatch it without showing it.
job "render" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["scene"]
    meta_optional = ["quality"]
  }

  group "g" {
    task "render" {
      driver = "raw_exec"

      config {
        command = "/bin/cat"
        args    = ["${NOMAD_TASK_DIR}/input.json"]
      }

      dispatch_payload {
        file = "input.json"
      }
    }
  }
}
