#!/usr/bin/env bash
# The nomadq demo. Until the agent lands it shows the client side: every
# example job is parsed and validated locally, and its wire JSON is printed
# in brief (job ID, type, and each group's max_run_duration in nanoseconds).
set -euo pipefail
cd "$(dirname "$0")/.."
nomad=./bin/nomad

"$nomad" version
echo
shopt -s nullglob
files=(examples/*.nomad.hcl)
if [ ${#files[@]} -eq 0 ]; then
  echo "no example jobs under examples/" >&2
  exit 1
fi
for f in "${files[@]}"; do
  echo "==> $f"
  "$nomad" job validate "$f"
  json=$("$nomad" job run -output "$f")
  id=$(printf '%s\n' "$json" | grep -m1 '"ID":' | sed 's/.*"ID": *"\([^"]*\)".*/\1/')
  type=$(printf '%s\n' "$json" | grep -m1 '"Type":' | sed 's/.*"Type": *"\([^"]*\)".*/\1/')
  mrd=$(printf '%s\n' "$json" | grep '"MaxRunDuration":' | sed 's/.*"MaxRunDuration": *\([^,]*\),*/\1/' | paste -sd, -)
  echo "    job=$id type=$type MaxRunDuration(ns)=${mrd:-none}"
done
echo
echo "demo: ${#files[@]} example jobs parsed and validated"
