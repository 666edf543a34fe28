#!/usr/bin/env bash
# queue-clean.sh undoes queue-full.sh: purges its jobs and turns the queue
# off, so later pages place their jobs at once.
set -uo pipefail
for j in fill big report backup; do
  nomad job stop -purge -detach "$j" >/dev/null 2>&1
done
nomad job stop -purge -detach -namespace etl etl >/dev/null 2>&1
nomad operator scheduler set-config -batch-queue-enabled=false >/dev/null
