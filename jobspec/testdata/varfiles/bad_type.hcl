replicas = "lots"
