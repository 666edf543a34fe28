#!/usr/bin/env bash
# make compat: run the official Go client's own test suite
# (github.com/hashicorp/nomad/api, MPL-2.0) against our bin/nomad.
#
# The api module is copied out of the module cache into a temporary
# directory at run time and never committed. Its harness starts the first
# `nomad` it finds on PATH, so bin/ goes first.
#
# Two passes:
#   1. probe: the suite with no nomad reachable. Every test that needs an
#      agent skips ("nomad not found"); that skip is how we know which tests
#      are server-backed.
#   2. real: the suite with bin/nomad first on PATH.
# scripts/compatreport prints pass/fail per test family, compares with
# scripts/compat/nomad-pass.txt (the server-backed tests that pass against
# real Nomad) and fails when a test listed in scripts/compat/nomadq-pass.txt
# (ones that passed before) no longer passes.
#
# Environment:
#   NOMAD_BIN         test this binary instead of bin/nomad (e.g. a real
#                     Nomad, to refresh the baseline)
#   COMPAT_RUN        -run pattern (default: every test)
#   COMPAT_PARALLEL   go test -parallel (default 2; each test starts an agent)
#   COMPAT_WRITE      "nomad" or "nomadq": rewrite that list from this run
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
GO=${GO:-go}
mod=github.com/hashicorp/nomad/api

if [ -z "${NOMAD_BIN:-}" ]; then
	echo "==> building bin/nomad"
	mkdir -p bin
	$GO build -o bin/nomad ./cmd/nomad
	NOMAD_BIN=$repo/bin/nomad
fi
NOMAD_BIN=$(cd "$(dirname "$NOMAD_BIN")" && pwd)/$(basename "$NOMAD_BIN")
"$NOMAD_BIN" version | head -n 1

$GO mod download "$mod"
src=$($GO list -m -f '{{.Dir}}' "$mod")
ver=$($GO list -m -f '{{.Version}}' "$mod")
echo "==> $mod@$ver (copied from the module cache)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/." "$work/api"
chmod -R u+w "$work/api"
mkdir -p "$work/bin" "$work/gopath"
ln -s "$NOMAD_BIN" "$work/bin/nomad"

run=${COMPAT_RUN:-.}
parallel=${COMPAT_PARALLEL:-2}
# compatreport lives in the tooling module (scripts/go.mod).
(cd scripts && $GO build -o "$work/compatreport" ./compatreport)

cd "$work/api"
$GO mod download
echo "==> probe: which tests need an agent"
# No nomad anywhere the harness looks: PATH without it, an empty GOPATH,
# and a working directory without nomad or bin/nomad.
env PATH="$(dirname "$($GO env GOROOT)/bin/go"):/usr/bin:/bin" GOPATH="$work/gopath" \
	$GO test -count=1 -json -timeout 10m -run "$run" ./... >"$work/probe.json" 2>&1 || true

echo "==> real run with $NOMAD_BIN first on PATH (parallel $parallel)"
started=$(date +%s)
env PATH="$work/bin:$PATH" GOPATH="$work/gopath" NOMAD_TEST_LOG_LEVEL=ERROR \
	$GO test -count=1 -json -timeout 30m -parallel "$parallel" -run "$run" ./... >"$work/real.json" 2>&1 || true
echo "    took $(( $(date +%s) - started ))s"

args=(-probe "$work/probe.json" -real "$work/real.json"
	-nomad "$repo/scripts/compat/nomad-pass.txt"
	-nomadq "$repo/scripts/compat/nomadq-pass.txt")
case "${COMPAT_WRITE:-}" in
nomad) args+=(-write "$repo/scripts/compat/nomad-pass.txt") ;;
nomadq) args+=(-write "$repo/scripts/compat/nomadq-pass.txt") ;;
"") ;;
*) echo "COMPAT_WRITE=$COMPAT_WRITE: want nomad or nomadq" >&2; exit 1 ;;
esac
if [ -n "${COMPAT_KEEP:-}" ]; then cp "$work/real.json" "$COMPAT_KEEP"; fi
"$work/compatreport" "${args[@]}"
