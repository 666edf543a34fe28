//go:build e2etest

package allocrunner

import (
	"os"
	"strings"
	"time"
)

// ClockOffsetEnvVar names a file holding a duration ("1h", "-30m") that
// test builds add to the wall clock the max_run_duration hook reads. The
// file is read on every reading, so a test steps the clock by rewriting
// it; a missing or unparsable file is no offset.
const ClockOffsetEnvVar = "NOMADQ_TEST_CLOCK_OFFSET_FILE"

func init() {
	path := os.Getenv(ClockOffsetEnvVar)
	if path == "" {
		return
	}
	wallNow = func() time.Time {
		now := time.Now().Round(0) // a stepped wall clock has no monotonic reading
		buf, err := os.ReadFile(path)
		if err != nil {
			return now
		}
		d, err := time.ParseDuration(strings.TrimSpace(string(buf)))
		if err != nil {
			return now
		}
		return now.Add(d)
	}
}
