job "transcode" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile", "quality"]
  }

  group "transcode" {
    task "ffmpeg" {
      driver = "raw_exec"

      dispatch_payload {
        file = "input.json"
      }

      config {
        command = "/usr/bin/ffmpeg"
        args    = ["-i", "${NOMAD_META_input}", "-preset", "${NOMAD_META_profile}"]
      }
    }
  }
}
