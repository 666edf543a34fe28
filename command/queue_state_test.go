package command

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// Every state the queue knows reads in words, with the reason's detail
// rather than its code, and the estimate when there is one; the code
// alone tells reserved and backfilled from placing.
func TestQueueStateText(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		entry queueEntry
		want  string
	}{
		{"queued fifo", queueEntry{Position: 2, Status: "queued", Reason: "Line", ReasonDetail: "1 job ahead in the line",
			EstimatedStart: now.Add(4 * time.Minute).UnixNano()},
			"queued at position 2 (1 job ahead in the line), estimated start in 4m0s"},
		{"queued priority", queueEntry{Position: 3, Status: "queued", Reason: "Priority", ReasonDetail: "2 jobs of higher priority or submitted earlier ahead of it"},
			"queued at position 3 (2 jobs of higher priority or submitted earlier ahead of it)"},
		{"held", queueEntry{Position: 1, Status: "queued", Reason: "Held", ReasonDetail: `held by an operator; "nomad queue release" lets it go`},
			`queued at position 1 (held by an operator; "nomad queue release" lets it go)`},
		{"placing", queueEntry{Status: "placing", Reason: "Placing", ReasonDetail: "the scheduler is placing its allocations"},
			"placing (the scheduler is placing its allocations)"},
		{"reserved", queueEntry{Status: "placing", Reason: "Resources", ReasonDetail: "waiting for capacity: reserved from the max_run_duration deadlines of running allocations",
			EstimatedStart: now.Add(time.Minute).UnixNano()},
			"reserved (waiting for capacity: reserved from the max_run_duration deadlines of running allocations), estimated start in 1m0s"},
		{"backfilled", queueEntry{Status: "placing", Reason: "Backfill", ReasonDetail: `released ahead of job "big", which holds a reservation; the scheduler is placing its allocations`},
			`backfilled (released ahead of job "big", which holds a reservation; the scheduler is placing its allocations)`},
		{"stalled", queueEntry{Status: "stalled", Reason: "Stalled", ReasonDetail: "no new placement for 5m0s (workload_timeout)"},
			"stalled (no new placement for 5m0s (workload_timeout))"},
		{"constrained", queueEntry{Status: "constrained", Reason: "Constrained", ReasonDetail: `group "g": no node has driver "docker"`},
			`constrained (group "g": no node has driver "docker")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, queueStateText(&tc.entry, now, ""))
		})
	}
	e := queueEntry{Position: 1, Status: "queued", Reason: "FairShare",
		ReasonDetail: "another namespace is further below its fair share and goes first"}
	must.Eq(t, "queued at position 1 in the batch queue (another namespace is further below its fair share and goes first)",
		queueStateText(&e, now, inTheQueue))
	// A server that gives no detail: the code stands for the words.
	bare := queueEntry{Position: 2, Status: "queued", Reason: "NamespaceLimit"}
	must.Eq(t, "queued at position 2 (NamespaceLimit)", queueStateText(&bare, now, ""))
}
