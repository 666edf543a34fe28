#!/usr/bin/env bash
# make test's go test run. The output of a whole-suite run is long, and a
# CI log often shows only its end; so the full output is kept in a file and,
# when the run fails, the lines that say what failed (failed tests, failed
# packages, and the tests a timeout panic names as still running) are
# printed again last.
set -uo pipefail
GO=${GO:-go}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$GO" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	echo
	echo "==> go test failed (exit $status); what failed:"
	grep -E -A4 '^panic: test timed out|running tests:' "$log" | grep -v '^goroutine\|^--$' || true
	grep -E '^\s*--- FAIL|^FAIL|^panic:|DATA RACE' "$log" | sort | uniq -c | sort -rn | head -60 || true
fi
exit "$status"
