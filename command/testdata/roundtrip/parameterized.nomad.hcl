job "rt-parameterized" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["customer"]
    meta_optional = ["priority"]
  }

  group "g" {
    task "t" {
      driver = "raw_exec"

      dispatch_payload {
        file = "input.json"
      }

      config {
        command = "/bin/cat"
        args    = ["${NOMAD_TASK_DIR}/input.json"]
      }
    }
  }
}
