package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// A client whose wall clock is stepped (the e2etest build's offset file,
// NOMADQ_TEST_CLOCK_OFFSET_FILE) kills an alloc at its max_run_duration
// deadline by the real clock: a step forward and back does not kill it
// early, and a step back that is corrected after the deadline does not
// delay the kill by the step.
func TestClientClockStepMaxRunDuration(t *testing.T) {
	offset := filepath.Join(t.TempDir(), "clock-offset")
	must.NoError(t, os.WriteFile(offset, []byte("0s"), 0o600))
	_, _, nomad := serverAndClient(t, func(c *agentSpec) { c.env = []string{"NOMADQ_TEST_CLOCK_OFFSET_FILE=" + offset} })
	step := func(d string) { must.NoError(t, os.WriteFile(offset, []byte(d), 0o600)) }

	cases := []struct {
		name  string
		limit time.Duration
		// before is how long before the deadline the clock steps by
		// by; after is how long after the deadline it is set right.
		by            string
		before, after time.Duration
	}{
		{name: "forward", limit: 6 * time.Second, by: "1h", before: 4 * time.Second, after: -2 * time.Second},
		{name: "back", limit: 5 * time.Second, by: "-1h", before: 2 * time.Second, after: 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile, termFile := filepath.Join(dir, "pid"), filepath.Join(dir, "term")
			script := fmt.Sprintf(`trap 'date +%%s.%%N > %s; exit 0' INT TERM; echo $$ > %s; while true; do sleep 0.1; done`,
				termFile, pidFile)
			id := "clock-" + tc.name
			job := batchJob(id, script)
			job.TaskGroups[0].MaxRunDuration = &tc.limit
			t.Cleanup(func() {
				if buf, err := os.ReadFile(pidFile); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(buf))); err == nil {
						_ = syscall.Kill(-pid, syscall.SIGKILL)
					}
				}
				step("0s")
			})
			_, _, err := nomad.Jobs().Register(job, nil)
			must.NoError(t, err)
			var deadline time.Time
			waitFor(t, 30*time.Second, func() error {
				allocs, _, err := nomad.Jobs().Allocations(id, true, nil)
				if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
					return fmt.Errorf("alloc not running yet: %v", err)
				}
				deadline = time.Unix(0, allocs[0].CreateTime).Add(tc.limit)
				return nil
			})
			time.Sleep(time.Until(deadline.Add(-tc.before)))
			step(tc.by)
			time.Sleep(time.Until(deadline.Add(tc.after)))
			step("0s")

			var killed time.Time
			waitFor(t, 30*time.Second, func() error {
				buf, err := os.ReadFile(termFile)
				if err != nil {
					return err
				}
				f, err := strconv.ParseFloat(strings.TrimSpace(string(buf)), 64)
				if err != nil {
					return err
				}
				killed = time.Unix(0, int64(f*1e9))
				return nil
			})
			late := killed.Sub(deadline)
			t.Logf("killed %s after the deadline", late)
			must.GreaterEq(t, -500*time.Millisecond, late, must.Sprint("killed before the deadline"))
			must.LessEq(t, max(tc.after, 0)+4*time.Second, late, must.Sprint("kill delayed past the clock's correction"))
			waitFor(t, 30*time.Second, func() error {
				alloc, _, err := nomad.Jobs().Allocations(id, true, nil)
				if err != nil || len(alloc) != 1 || alloc[0].ClientStatus != "complete" {
					return fmt.Errorf("alloc not complete yet: %v", err)
				}
				if alloc[0].ClientDescription != maxRunReason {
					return fmt.Errorf("alloc ended with %q", alloc[0].ClientDescription)
				}
				return nil
			})
		})
	}
}
