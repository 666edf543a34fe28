#!/usr/bin/env bash
# The nomadq demo: start a dev agent on free ports with the batch queue
# enabled, run the example jobs, show their status, stop the agent.
# The agent never outlives the script (trap EXIT).
set -euo pipefail
cd "$(dirname "$0")/.."
nomad="$PWD/bin/nomad"

work=$(mktemp -d "${TMPDIR:-/tmp}/nomadq-demo.XXXXXX")
agent_pid=""
cleanup() {
  if [ -n "$agent_pid" ] && kill -0 "$agent_pid" 2>/dev/null; then
    kill -INT "$agent_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$agent_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$agent_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/agent.hcl" <<'HCL'
log_level = "WARN"
server {
  enabled = true
  default_scheduler_config {
    batch_queue {
      enabled               = true
      order                 = "priority"
      concurrent_placements = 2
      workload_timeout      = "2m"
    }
  }
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
HCL

"$nomad" version
echo "==> starting a dev agent (ports picked by the kernel)"
"$nomad" agent -dev -config "$work/agent.hcl" -http-port 0 -rpc-port 0 -serf-port 0 \
  >"$work/agent.out" 2>"$work/agent.err" &
agent_pid=$!

addr=""
for _ in $(seq 1 100); do
  addr=$(sed -n 's/^==> HTTP API listening on \(http:[^ ]*\)$/\1/p' "$work/agent.out" | head -n1)
  [ -n "$addr" ] && break
  kill -0 "$agent_pid" 2>/dev/null || { cat "$work/agent.err" >&2; echo "agent exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { echo "agent did not report its HTTP address" >&2; exit 1; }
export NOMAD_ADDR="$addr"
echo "==> agent listening on $NOMAD_ADDR"

# Wait for the agent's own node to be ready.
for _ in $(seq 1 100); do
  "$nomad" node status 2>/dev/null | grep -q ' ready$' && break
  sleep 0.1
done
"$nomad" node status
echo
echo "==> scheduler configuration (batch queue from the agent config)"
"$nomad" operator scheduler get-config
echo

for f in hello report sysbatch priority; do
  echo "==> nomad job run examples/$f.nomad.hcl"
  "$nomad" job run "examples/$f.nomad.hcl"
  echo
done
echo "==> nomad job run -detach examples/timeout.nomad.hcl (max_run_duration = 3s)"
"$nomad" job run -detach examples/timeout.nomad.hcl
echo

# Batch jobs end on their own (timeout at its 3 s max_run_duration); give
# each up to 20 s.
for job in hello report node-check priority timeout; do
  for _ in $(seq 1 200); do
    "$nomad" job status "$job" | grep -q '^Status *= dead' && break
    sleep 0.1
  done
done

echo "==> nomad job status"
"$nomad" job status
echo
for job in hello report timeout; do
  echo "==> nomad job status $job"
  "$nomad" job status "$job"
  echo
done
alloc=$("$nomad" job status report | awk '/^Allocations/{getline; getline; print $1; exit}')
echo "==> nomad alloc status $alloc"
"$nomad" alloc status "$alloc"
echo
echo "==> nomad alloc logs $alloc render"
"$nomad" alloc logs "$alloc" render
echo

# The timeout job's sleep 600 was killed at its deadline: the alloc is
# complete with the reason, and nothing restarted or replaced it.
talloc=$("$nomad" job status timeout | awk '/^Allocations/{getline; getline; print $1; exit}')
echo "==> nomad alloc status $talloc (timed out)"
tout=$("$nomad" alloc status "$talloc")
echo "$tout"
grep -q '^Client Description *= allocation exceeded max_run_duration$' <<<"$tout" || {
  echo "demo: the timeout job did not time out" >&2
  exit 1
}
echo
echo "demo: done"
