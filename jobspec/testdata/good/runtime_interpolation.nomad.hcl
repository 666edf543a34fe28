job "interp" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      env {
        NODE    = "${node.unique.name}"
        DC      = "${node.datacenter}"
        RACK    = "${meta.rack}"
        HOME    = "${env["HOME"]}"
        ALLOC   = "${NOMAD_ALLOC_ID}"
        COMBO   = "${attr.kernel.name}-${attr.cpu.arch}"
        ESCAPED = "$${literal}"
      }

      config {
        command = "${NOMAD_TASK_DIR}/bin/run"
        args    = ["--index", "${NOMAD_ALLOC_INDEX}", "--gpu", "${device.model}"]
      }
    }
  }
}
