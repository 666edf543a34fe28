package command

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// Timeouts show as timeouts: once an alloc ends by max_run_duration, the
// job summary counts it (TimedOut on the wire, a Timed Out column in job
// status), the Allocations table says the deadline was reached, and alloc
// status says when the alloc ended instead of a deadline ahead.
func TestMaxRunDuration_TimeoutsAreVisible(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	code, out, errOut := cli(t, addr, "job", "run", "-detach", queueJobFile(t, "slow", 32, `max_run_duration = "1s"`))
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	var allocID string
	waitFor(t, "the alloc to time out", 30*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("slow", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
			return fmt.Errorf("allocs: %d", len(allocs))
		}
		allocID = allocs[0].ID
		return nil
	})

	var summary jobSummaryBody
	_, err = c.Raw().Query("/v1/job/slow/summary", &summary, nil)
	must.NoError(t, err)
	must.Eq(t, 1, summary.Summary["g"].Complete)
	must.Eq(t, 1, summary.Summary["g"].TimedOut)

	code, out, errOut = cli(t, addr, "job", "status", "slow")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`(?m)^Task Group +Queued +Starting +Running +Failed +Complete +Lost +Unknown +Timed Out$`), out)
	must.RegexMatch(t, regexp.MustCompile(`(?m)^g +0 +0 +0 +0 +1 +0 +0 +1$`), out)
	must.RegexMatch(t, regexp.MustCompile(`(?m)complete .*reached \(timed out\)$`), out)

	code, out, errOut = cli(t, addr, "alloc", "status", allocID)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`Max Run Deadline +\= reached \S+: ended by max_run_duration at \S+`), out)
	must.StrNotContains(t, out, "Max Run Deadline     = in ")
}
