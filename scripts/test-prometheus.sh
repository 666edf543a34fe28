#!/usr/bin/env bash
# Runs the agent's metrics against a real Prometheus server (issue 9):
# installs Debian's prometheus package (prometheus and promtool) when it
# is missing, then runs TestRealPrometheus, which checks our exposition
# with promtool, starts its own Prometheus on a free loopback port
# scraping a dev agent every second, and stops both when it ends. It
# also checks that the batch queue's declared families are scraped with
# their help texts from the agent's start and are still there after an
# idle period longer than the sink's expiry (shortened to 2s for the test).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
	echo "==> installing Debian's prometheus package"
	$sudo apt-get update
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends prometheus
fi

# The test starts and stops the Prometheus server it scrapes with; a
# signal here reaches go test, whose cleanup stops it.
go_pid=""
trap 'if [ -n "$go_pid" ]; then kill "$go_pid" 2>/dev/null || true; fi' INT TERM
NOMADQ_PROMETHEUS=1 ${GO:-go} test -count=1 -race -run '^TestRealPrometheus$' -v ./agent/ &
go_pid=$!
wait "$go_pid"
