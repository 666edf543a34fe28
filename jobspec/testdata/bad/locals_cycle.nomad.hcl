locals {
  a = local.b
  b = local.a
}

job "x" {
}
