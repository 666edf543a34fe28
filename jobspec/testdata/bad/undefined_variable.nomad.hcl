variable "image" {
  default = "app"
}

job "x" {
  group "g" {
    task "t" {
      config {
        image = var.imgae
      }
    }
  }
}
