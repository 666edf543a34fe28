#!/usr/bin/env bash
# alloc.sh JOB FILE STATUS: runs FILE (job JOB) unless JOB is registered,
# waits up to 30 s for one of its allocations to have client status STATUS
# (running, with every task running and none waiting to restart;
# complete) and prints that
# allocation's ID. Sub markers use it
# for the pages' placeholder IDs.
set -euo pipefail
job=$1 file=$2 status=$3
nomad job inspect "$job" >/dev/null 2>&1 || nomad job run -detach "$file" >/dev/null
for _ in $(seq 1 150); do
  id=$(nomad job allocs -t "{{range .}}{{if eq .ClientStatus \"$status\"}}{{\$ok := true}}{{if eq .ClientStatus \"running\"}}{{range .TaskStates}}{{if or (ne .State \"running\") (.StartedAt.Before .LastRestart)}}{{\$ok = false}}{{end}}{{end}}{{end}}{{if \$ok}}{{.ID}} {{end}}{{end}}{{end}}" "$job" | awk '{print $1}')
  if [ -n "$id" ]; then
    echo "$id"
    exit 0
  fi
  sleep 0.2
done
echo "no $status allocation of job $job after 30s" >&2
exit 1
