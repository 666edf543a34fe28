package batchqueue

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// A published view's listing of released workloads is built by its first
// reader, once, not by the round that published it; built, it is what
// the round used to build: in release order, each verdict's status and
// reason, and the reservation's reason and estimate on the job it holds
// room for.
func TestReleasedList_BuiltOnceByItsFirstReader(t *testing.T) {
	entry := func(job string, released int64) *structs.BatchQueueEntry {
		return &structs.BatchQueueEntry{Namespace: "default", JobID: job, EvalID: job + "-eval",
			Release: &structs.BatchQueueRelease{Index: uint64(released), Time: released}}
	}
	start := time.Unix(0, 5000)
	pending := []Workload{
		{Entry: entry("late", 300), Verdict: Verdict{Status: structs.BatchQueueStatusStalled, Reason: "no progress"}},
		{Entry: entry("early", 100)}, // not judged yet
		{Entry: entry("held", 200), Verdict: Verdict{Status: structs.BatchQueueStatusPlacing}},
	}
	res := &Reservation{Entry: pending[2].Entry, Why: WhyReserved, Start: start}
	v := view{pending: pending, reservation: res, released: new(releasedList)}
	must.Nil(t, v.released.entries, must.Sprint("publishing builds no listing"))

	got := v.releasedEntries()
	must.Len(t, 3, got)
	must.Eq(t, []string{"early", "held", "late"}, []string{got[0].JobID, got[1].JobID, got[2].JobID})
	must.Eq(t, structs.BatchQueueStatusPlacing, got[0].Status)
	must.Eq(t, ReasonPlacing, got[0].Reason)
	must.Eq(t, "released to the scheduler", got[0].ReasonDetail)
	must.Eq(t, ReasonResources, got[1].Reason)
	must.Eq(t, WhyReserved, got[1].ReasonDetail)
	must.Eq(t, int64(5000), got[1].EstimatedStart)
	must.Eq(t, structs.BatchQueueStatusStalled, got[2].Status)
	must.Eq(t, ReasonStalled, got[2].Reason)
	must.Eq(t, "no progress", got[2].ReasonDetail)

	again := v.releasedEntries()
	must.True(t, &again[0] == &got[0], must.Sprint("built once"))
	must.Nil(t, view{}.releasedEntries())
}
