# An example batch job for nomadq. Submit it with
#
#   nomad job run example.nomad.hcl
#
# and follow it with "nomad job status example". Every block below can be
# changed; "nomad job validate example.nomad.hcl" checks the file first.
job "example" {
  # Batch jobs run to completion; the batch job queue on the leader
  # releases them to the scheduler in order.
  type = "batch"

  # Scheduling priority between 1 and 100 (default 50).
  priority = 50

  group "work" {
    # How many copies of this group to run.
    count = 1

    # The wall-clock limit of each allocation of this group, counted from
    # its placement. At the deadline the client kills its tasks and the
    # allocation ends "complete" (not failed: it is neither restarted nor
    # rescheduled) with the description "allocation exceeded
    # max_run_duration", which "nomad alloc status" shows.
    max_run_duration = "10m"

    # Batch allocations that fail are retried on the same node first.
    restart {
      attempts = 1
      delay    = "5s"
      mode     = "fail"
    }

    # A service job's group may also have a network block with ports and
    # service blocks with provider = "nomad"; Consul services are refused.

    task "hello" {
      # raw_exec runs the command without isolation; "nomad agent -dev"
      # enables it.
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"hello from $NOMAD_JOB_NAME, allocation $NOMAD_ALLOC_ID\"; sleep 1"]
      }

      # What the scheduler reserves on the node for this task.
      resources {
        cpu    = 100 # MHz
        memory = 64  # MiB
      }
    }
  }
}
