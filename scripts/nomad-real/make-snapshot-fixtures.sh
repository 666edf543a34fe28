#!/usr/bin/env bash
# make-snapshot-fixtures.sh NOMAD_BINARY OUTDIR
#
# Writes snapshot archives made by a real Nomad, for the tests of
# nomad/snapshot/nomadfmt (issue 46), into OUTDIR:
#
#   full.snap   ACLs on: namespace research, node pool gpu, two batch jobs
#               with max_run_duration (one in research), a periodic job, a
#               parameterized job, two variables of two items each, an ACL
#               policy, a client token bound to it and an ACL role.
#   small.snap  ACLs off: namespace small and one batch job in it.
#
# and beside each NAME.snap the real CLI's `operator snapshot inspect`
# output, NAME.inspect.txt, plus NAME.ids.txt: the IDs the README quotes.
#
# Each snapshot comes from a fresh one-server agent (server and client in
# one process, Raft on disk in a temporary data dir) on free loopback
# ports, never Nomad's defaults 4646-4648. The agent is killed and its data
# dir removed on exit. Needs curl, jq and python3 (to find free ports).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 NOMAD_BINARY OUTDIR" >&2
	exit 2
fi
NOMAD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
OUT=$2
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# Fixed secrets, so that tests can name them: the bootstrap (management)
# token's secret is given to `nomad acl bootstrap`.
BOOTSTRAP_SECRET=3f4a1b2c-5d6e-4f70-8a91-b2c3d4e5f607

work=$(mktemp -d /tmp/nomad-real-fixtures.XXXXXX)
agent_pid=
cleanup() {
	if [ -n "$agent_pid" ]; then
		kill "$agent_pid" 2>/dev/null || true
		wait "$agent_pid" 2>/dev/null || true
	fi
	# The client leaves its allocations' secrets and private dirs mounted
	# when it stops (tasks survive an agent restart in Nomad).
	awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r |
		while read -r m; do umount "$m" || true; done
	rm -rf "$work"
}
trap cleanup EXIT

free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# start_agent NAME ACL(true|false): starts a fresh agent, sets NOMAD_ADDR.
start_agent() {
	local name=$1 acl=$2 http rpc serf
	read -r http rpc serf < <(free_ports 3)
	local dir=$work/$name
	mkdir -p "$dir/data"
	cat >"$dir/agent.hcl" <<EOF
name      = "$name"
data_dir  = "$dir/data"
bind_addr = "127.0.0.1"
log_level = "INFO"

ports {
  http = $http
  rpc  = $rpc
  serf = $serf
}

advertise {
  http = "127.0.0.1"
  rpc  = "127.0.0.1"
  serf = "127.0.0.1"
}

server {
  enabled          = true
  bootstrap_expect = 1
}

client {
  enabled = true
  options = {
    "fingerprint.denylist" = "env_aws,env_gce,env_azure,env_digitalocean,consul,vault"
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}

acl {
  enabled = $acl
}
EOF
	"$NOMAD" agent -config "$dir/agent.hcl" >"$dir/agent.log" 2>&1 &
	agent_pid=$!
	export NOMAD_ADDR=http://127.0.0.1:$http
	unset NOMAD_TOKEN
	for _ in $(seq 1 120); do
		if curl -fsS "$NOMAD_ADDR/v1/status/leader" 2>/dev/null | grep -q ':'; then
			return 0
		fi
		sleep 0.5
	done
	echo "agent $name did not elect a leader; its log:" >&2
	cat "$dir/agent.log" >&2
	exit 1
}

stop_agent() {
	kill "$agent_pid"
	wait "$agent_pid" 2>/dev/null || true
	agent_pid=
	awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r |
		while read -r m; do umount "$m" || true; done
}

# quiet CMD...: runs CMD, shows its output only when it fails.
quiet() {
	local out
	if ! out=$("$@" 2>&1); then
		echo "failed: $*" >&2
		echo "$out" >&2
		exit 1
	fi
}

# wait_node: the client has registered and is ready.
wait_node() {
	for _ in $(seq 1 120); do
		if [ "$("$NOMAD" node status -json 2>/dev/null | jq -r '[.[] | select(.Status=="ready")] | length')" = 1 ]; then
			return 0
		fi
		sleep 0.5
	done
	echo "the client did not become ready" >&2
	exit 1
}

# wait_complete NAMESPACE JOB: the job's allocation has completed.
wait_complete() {
	local ns=$1 job=$2
	for _ in $(seq 1 120); do
		if "$NOMAD" job allocs -namespace "$ns" -json "$job" 2>/dev/null |
			jq -e 'length > 0 and all(.[]; .ClientStatus == "complete")' >/dev/null; then
			return 0
		fi
		sleep 0.5
	done
	echo "job $ns/$job did not complete:" >&2
	"$NOMAD" job status -namespace "$ns" "$job" >&2 || true
	exit 1
}

# save NAME: the snapshot, its inspect output and the IDs the README quotes.
save() {
	local name=$1
	"$NOMAD" operator snapshot save "$OUT/$name.snap" >/dev/null
	"$NOMAD" operator snapshot inspect "$OUT/$name.snap" >"$OUT/$name.inspect.txt"
}

jobs=$work/jobs
mkdir -p "$jobs"

cat >"$jobs/sleepy.nomad.hcl" <<'EOF'
job "sleepy" {
  type        = "batch"
  datacenters = ["*"]

  group "work" {
    max_run_duration = "1h"

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo sleepy ran"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
EOF

cat >"$jobs/train.nomad.hcl" <<'EOF'
job "train" {
  namespace   = "research"
  type        = "batch"
  datacenters = ["*"]
  priority    = 70

  group "trainer" {
    max_run_duration = "30m"

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo train ran"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
EOF

cat >"$jobs/nightly.nomad.hcl" <<'EOF'
job "nightly" {
  type        = "batch"
  datacenters = ["*"]

  periodic {
    crons            = ["0 3 * * *"]
    time_zone        = "UTC"
    prohibit_overlap = true
  }

  group "report" {
    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo nightly"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
EOF

cat >"$jobs/render.nomad.hcl" <<'EOF'
job "render" {
  type        = "batch"
  datacenters = ["*"]

  parameterized {
    payload       = "optional"
    meta_required = ["scene"]
    meta_optional = ["frames"]
  }

  group "render" {
    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo rendering $NOMAD_META_scene"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
EOF

cat >"$jobs/hello.nomad.hcl" <<'EOF'
job "hello" {
  namespace   = "small"
  type        = "batch"
  datacenters = ["*"]

  group "hello" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
EOF

cat >"$jobs/research.ns.hcl" <<'EOF'
name        = "research"
description = "Research team workloads"

meta {
  owner = "ml-lab"
  tier  = "gold"
}
EOF

cat >"$jobs/gpu.pool.hcl" <<'EOF'
node_pool "gpu" {
  description = "Nodes with GPUs"

  meta {
    vendor = "acme"
  }
}
EOF

cat >"$jobs/research-read.policy.hcl" <<'EOF'
namespace "research" {
  policy = "read"
}

namespace "default" {
  capabilities = ["list-jobs", "read-job"]
}

node_pool "gpu" {
  policy = "read"
}
EOF

echo "==> $("$NOMAD" version | head -n 1)"

# --- full.snap ----------------------------------------------------------
echo "==> full.snap"
start_agent full true
printf '%s' "$BOOTSTRAP_SECRET" >"$work/bootstrap.secret"
"$NOMAD" acl bootstrap -json "$work/bootstrap.secret" >"$work/bootstrap.json"
export NOMAD_TOKEN=$BOOTSTRAP_SECRET
wait_node

"$NOMAD" namespace apply "$jobs/research.ns.hcl" >/dev/null
"$NOMAD" node pool apply "$jobs/gpu.pool.hcl" >/dev/null 2>&1
quiet "$NOMAD" job run -detach "$jobs/sleepy.nomad.hcl"
quiet "$NOMAD" job run -detach "$jobs/train.nomad.hcl"
quiet "$NOMAD" job run -detach "$jobs/nightly.nomad.hcl"
quiet "$NOMAD" job run -detach "$jobs/render.nomad.hcl"
quiet "$NOMAD" var put -out=none nomad/jobs/sleepy user=alice password=s3cret
quiet "$NOMAD" var put -out=none -namespace research shared/config region=eu-west size=3
"$NOMAD" acl policy apply -description "Read research jobs" research-read "$jobs/research-read.policy.hcl" >/dev/null
"$NOMAD" acl token create -name ci-reader -type client -policy research-read -json >"$work/token.json"
"$NOMAD" acl role create -name ops -description "Operators" -policy research-read -json >"$work/role.json"
wait_complete default sleepy
wait_complete research train
save full
{
	echo "nomad_version: $("$NOMAD" version | head -n 1)"
	echo "bootstrap_secret: $BOOTSTRAP_SECRET"
	echo "bootstrap_accessor: $(jq -r .AccessorID "$work/bootstrap.json")"
	echo "token_name: $(jq -r .Name "$work/token.json")"
	echo "token_accessor: $(jq -r .AccessorID "$work/token.json")"
	echo "token_secret: $(jq -r .SecretID "$work/token.json")"
	echo "role_id: $(jq -r .ID "$work/role.json")"
	echo "node_id: $("$NOMAD" node status -json | jq -r '.[0].ID')"
	echo "sleepy_alloc: $("$NOMAD" job allocs -json sleepy | jq -r '.[0].ID')"
	echo "train_alloc: $("$NOMAD" job allocs -namespace research -json train | jq -r '.[0].ID')"
	echo "root_key: $(curl -fsS -H "X-Nomad-Token: $NOMAD_TOKEN" "$NOMAD_ADDR/v1/operator/keyring/keys" | jq -r '.[0].KeyID')"
} >"$OUT/full.ids.txt"
stop_agent

# --- small.snap ---------------------------------------------------------
echo "==> small.snap"
start_agent small false
wait_node
"$NOMAD" namespace apply -description "A small namespace" small >/dev/null 2>&1
quiet "$NOMAD" job run -detach "$jobs/hello.nomad.hcl"
wait_complete small hello
save small
{
	echo "nomad_version: $("$NOMAD" version | head -n 1)"
	echo "node_id: $("$NOMAD" node status -json | jq -r '.[0].ID')"
	echo "hello_alloc: $("$NOMAD" job allocs -namespace small -json hello | jq -r '.[0].ID')"
} >"$OUT/small.ids.txt"
stop_agent

ls -l "$OUT"
