image    = "app:file"
replicas = 4
