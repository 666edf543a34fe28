image = "app:file"
nope  = 1
