job "durations" {
  type = "batch"

  group "g" {
    max_run_duration = 90000000000
    shutdown_delay   = "1h30m"
    stop_after_client_disconnect = "2m"

    task "t" {
      driver         = "raw_exec"
      kill_timeout   = "250ms"
      shutdown_delay = 2000000000
      config {
        command = "/bin/true"
      }
    }
  }
}
