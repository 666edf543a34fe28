job "fetcher" {
  type = "batch"

  group "g" {
    task "t" {
      driver = "raw_exec"

      artifact {
        source      = "https://example.com/tool.tar.gz"
        destination = "local/tool"
        mode        = "any"
        options {
          checksum = "sha256:abcd"
        }
        headers {
          User-Agent = "nomadq"
        }
      }

      config {
        command = "local/tool/bin/tool"
      }
    }
  }
}
