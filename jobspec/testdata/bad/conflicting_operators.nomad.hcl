job "x" {
  constraint {
    attribute = "${attr.kernel.version}"
    operator  = "="
    version   = ">= 5"
  }
}
