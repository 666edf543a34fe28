package batchqueue

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// In fifo order a queued entry waits for nothing but the line: its
// reason is Line, not Priority, and its detail its place there.
func TestQueue_FIFOReasonIsThePlaceInLine(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	st.SetBatchQueueRouter(Route)
	h := &harness{t: t, st: st, evals: make(map[string]string)}
	bq := cfg(structs.BatchQueueOrderFIFO, 1, time.Hour)
	h.setConfig(bq)
	bq.Canonicalize()
	h.registerAll("a", "b", "c")
	q := New(Config{State: func() *state.StateStore { return st }, Commit: h})
	q.view = view{settings: bq, store: st}

	want := map[string]string{
		"a": "first in line, waiting for a free placement slot",
		"b": "1 job ahead in the line",
		"c": "2 jobs ahead in the line",
	}
	for _, e := range q.List() {
		must.Eq(t, ReasonLine, e.Reason, must.Sprint(e.JobID))
		must.Eq(t, want[e.JobID], e.ReasonDetail, must.Sprint(e.JobID))
	}
	for id, detail := range want {
		e := q.Lookup(structs.DefaultNamespace, id)
		must.Eq(t, ReasonLine, e.Reason)
		must.Eq(t, detail, e.ReasonDetail)
	}
}

// Every released workload carries a reason: placing ones say what they
// wait for and when they stall, and one released after the workload that
// holds a reservation says it was backfilled ahead of it.
func TestReleasedList_PlacingEntriesCarryAReason(t *testing.T) {
	entry := func(job string, released int64) *structs.BatchQueueEntry {
		return &structs.BatchQueueEntry{Namespace: "default", JobID: job, EvalID: job + "-eval",
			Release: &structs.BatchQueueRelease{Index: uint64(released), Time: released}}
	}
	deadline := time.Date(2026, 5, 1, 12, 5, 0, 0, time.UTC)
	pending := []Workload{
		{Entry: entry("big", 100), Verdict: Verdict{Status: structs.BatchQueueStatusPlacing, Exhausted: true}},
		{Entry: entry("short", 200), Verdict: Verdict{Status: structs.BatchQueueStatusPlacing, Deadline: deadline}},
	}
	v := view{pending: pending, reservation: &Reservation{Entry: pending[0].Entry, Why: WhyReserved},
		released: new(releasedList)}
	got := v.releasedEntries()
	must.Len(t, 2, got)
	must.Eq(t, ReasonResources, got[0].Reason)
	must.Eq(t, WhyReserved, got[0].ReasonDetail)
	must.Eq(t, ReasonBackfill, got[1].Reason)
	must.Eq(t, `released ahead of job "big", which holds a reservation; `+
		"the scheduler is placing its allocations, stalled if none is placed by 2026-05-01T12:05:00Z", got[1].ReasonDetail)

	alone := view{pending: pending[1:], released: new(releasedList)}
	must.Eq(t, ReasonPlacing, alone.releasedEntries()[0].Reason)
	must.Eq(t, "the scheduler is placing its allocations, stalled if none is placed by 2026-05-01T12:05:00Z",
		alone.releasedEntries()[0].ReasonDetail)
}

// A Priority entry's detail counts the jobs ahead of it, in the words of
// its order.
func TestPriorityDetail(t *testing.T) {
	cases := []struct {
		order string
		pos   int
		want  string
	}{
		{structs.BatchQueueOrderPriority, 1, "first in line, waiting for a free placement slot"},
		{structs.BatchQueueOrderPriority, 2, "1 job of higher priority or submitted earlier ahead of it"},
		{structs.BatchQueueOrderPriority, 4, "3 jobs of higher priority or submitted earlier ahead of it"},
		{structs.BatchQueueOrderMultifactor, 3, "2 jobs of higher effective priority ahead of it"},
		{structs.BatchQueueOrderFair, 2, "1 job ahead of it in the fair-share order"},
	}
	for _, tc := range cases {
		must.Eq(t, tc.want, priorityDetail(tc.order, tc.pos), must.Sprintf("%s at %d", tc.order, tc.pos))
	}
}
