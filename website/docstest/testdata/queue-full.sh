#!/usr/bin/env bash
# queue-full.sh: the batch queue scene of website/commands/queue.md. Turns
# the queue on (fifo, one placement at a time), fills the node's memory
# with job "fill", and submits "big" (released, placing while it waits for
# capacity), then "backup", "report" and, in namespace etl, "etl", which
# wait queued behind it.
# queue-clean.sh undoes it.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

nomad operator scheduler set-config -batch-queue-enabled=true -batch-queue-order=fifo \
  -batch-queue-concurrent-placements=1 -batch-queue-backfill=false >/dev/null

node=$(nomad node status -self -t '{{.ID}}')
total=$(curl -s "$NOMAD_ADDR/v1/node/$node" | jq '.NodeResources.Memory.MemoryMB')
used=$(curl -s "$NOMAD_ADDR/v1/node/$node/allocations" |
  jq '[.[] | select(.ClientStatus == "running" or .ClientStatus == "pending") | .AllocatedResources.Tasks[].Memory.MemoryMB] | add // 0')

job() { # name seconds memory [namespace]
  cat >"$dir/$1.nomad.hcl" <<HCL
job "$1" {
  namespace = "${4:-default}"
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["$2"]
      }
      resources {
        cpu    = 20
        memory = $3
      }
    }
  }
}
HCL
  nomad job run -detach "$dir/$1.nomad.hcl" >/dev/null
}

job fill 600 $((total - used - 64))
for _ in $(seq 1 100); do
  [ "$(nomad job allocs -t '{{range .}}{{.ClientStatus}}{{end}}' fill)" = running ] && break
  sleep 0.2
done
job big 1 128
job backup 1 128
job report 1 128
nomad namespace apply etl >/dev/null
job etl 1 128 etl
for _ in $(seq 1 100); do
  queued=$(curl -s "$NOMAD_ADDR/v1/queue/jobs?namespace=*" | jq '[.[] | select(.Status == "queued")] | length')
  [ "$queued" = 3 ] && exit 0
  sleep 0.2
done
echo "backup, report and etl are not queued after 20s" >&2
exit 1
