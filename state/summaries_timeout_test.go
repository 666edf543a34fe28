package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// A job summary counts how many of its complete allocs ended by
// max_run_duration, as the client reports it, and a reconcile from the
// allocs reaches the same count.
func TestSummary_CountsTimedOut(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	timeout := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
	done := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
	must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{timeout, done}))

	ended := clientUpdate(timeout, structs.AllocClientStatusComplete)
	ended.ClientDescription = structs.AllocTimeoutReasonMaxRunDuration
	must.NoError(t, s.UpdateAllocsFromClient(3, []*structs.Allocation{ended, clientUpdate(done, structs.AllocClientStatusComplete)}))
	want := structs.TaskGroupSummary{Complete: 2, TimedOut: 1}
	must.Eq(t, want, groupSummary(t, s, job, "web"))

	// The same update again counts nothing twice.
	must.NoError(t, s.UpdateAllocsFromClient(4, []*structs.Allocation{ended}))
	must.Eq(t, want, groupSummary(t, s, job, "web"))

	must.NoError(t, s.ReconcileJobSummaries(5))
	must.Eq(t, want, groupSummary(t, s, job, "web"))
}
