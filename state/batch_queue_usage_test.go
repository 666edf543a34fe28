package state

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestBatchQueueUsageReset: a reset records the namespace's reset time,
// and a later one replaces it.
func TestBatchQueueUsageReset(t *testing.T) {
	s := testStore(t)
	reset := func(index uint64, ns string, at int64) {
		must.NoError(t, s.BatchQueueUsageReset(index, &structs.BatchQueueUsageResetRequest{Time: at,
			WriteRequest: structs.WriteRequest{Namespace: ns}}))
	}
	reset(5, "qa", 100)
	reset(6, "qb", 200)
	reset(7, "qa", 300)
	got, err := s.BatchQueueUsageResets(nil)
	must.NoError(t, err)
	must.Eq(t, map[string]time.Time{"qa": time.Unix(0, 300), "qb": time.Unix(0, 200)}, got)
	idx, err := s.Index(TableBatchQueueUsageResets)
	must.NoError(t, err)
	must.Eq(t, 7, idx)
}

// TestBatchQueueUsageFold: deleting (garbage collecting) finished batch
// allocs folds their decayed usage into their namespace's row, computed
// from the allocs' own run times; the fold survives a snapshot and
// restore (a new leader reads it), adds up over several collections, and
// a reset clears it and clips the runs a later collection folds.
func TestBatchQueueUsageFold(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	node.SchedulingEligibility = structs.NodeSchedulingEligible
	must.NoError(t, s.UpsertNode(1, node))
	job := mockBatchJob("b")
	must.NoError(t, s.UpsertJob(2, job))
	service := mockJob("svc")
	must.NoError(t, s.UpsertJob(2, service))
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	index := uint64(3)
	// ran puts a complete alloc of j that ran from start to end and
	// returns its ID.
	ran := func(j *structs.Job, start, end time.Time) string {
		t.Helper()
		a := mockAlloc(j, node.ID, "", structs.AllocClientStatusPending)
		must.NoError(t, s.UpsertAllocs(index, []*structs.Allocation{a}))
		index++
		done := clientUpdate(a, structs.AllocClientStatusComplete)
		done.TaskStates["server"].StartedAt, done.TaskStates["server"].FinishedAt = start, end
		done.ModifyTime = end.UnixNano()
		must.NoError(t, s.UpdateAllocsFromClient(index, []*structs.Allocation{done}))
		index++
		return a.ID
	}
	gc := func(ids ...string) {
		t.Helper()
		must.NoError(t, s.DeleteEval(index, nil, ids))
		index++
	}
	folded := func(st *StateStore) map[string]structs.BatchQueueFoldedUsage {
		t.Helper()
		got, err := st.BatchQueueUsageFolded(nil)
		must.NoError(t, err)
		return got
	}
	h := structs.DefaultBatchQueueUsageHalfLife
	share := 100.0 / 4000 // the alloc's CPU part of the node, above its memory part
	near := func(want, got float64) {
		t.Helper()
		must.True(t, math.Abs(want-got) <= 1e-9*want, must.Sprintf("want %v, got %v", want, got))
	}

	first := ran(job, t0, t0.Add(time.Hour))
	svc := ran(service, t0, t0.Add(time.Hour))
	gc(first, svc)
	got := folded(s)
	must.MapLen(t, 1, got, must.Sprint("only batch allocs count"))
	must.Eq(t, t0.Add(time.Hour).UnixNano(), got["default"].At)
	near(structs.DecayedShareSeconds(share, t0, t0.Add(time.Hour), t0.Add(time.Hour), h), got["default"].Usage)
	resets, err := s.BatchQueueUsageResets(nil)
	must.NoError(t, err)
	must.MapEmpty(t, resets, must.Sprint("a fold is no reset"))

	// A second collection adds up: read a day later, the row is the two
	// runs' usage as if their allocs were still in state.
	second := ran(job, t0.Add(2*time.Hour), t0.Add(4*time.Hour))
	gc(second)
	later := t0.Add(24 * time.Hour)
	want := structs.DecayedShareSeconds(share, t0, t0.Add(time.Hour), later, h) +
		structs.DecayedShareSeconds(share, t0.Add(2*time.Hour), t0.Add(4*time.Hour), later, h)
	near(want, folded(s)["default"].DecayedTo(later, h))

	// A new leader restores the row from a snapshot.
	snap, err := s.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(t, err)
	restored, err := RestoreFrom(&buf)
	must.NoError(t, err)
	must.Eq(t, folded(s), folded(restored))

	// A reset forgets the folded usage; a run that straddled the reset
	// counts from it on once collected.
	reset := t0.Add(5 * time.Hour)
	must.NoError(t, s.BatchQueueUsageReset(index, &structs.BatchQueueUsageResetRequest{Time: reset.UnixNano(),
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}))
	index++
	must.MapEmpty(t, folded(s))
	third := ran(job, t0.Add(4*time.Hour), t0.Add(6*time.Hour))
	gc(third)
	near(structs.DecayedShareSeconds(share, reset, t0.Add(6*time.Hour), t0.Add(6*time.Hour), h), folded(s)["default"].Usage)
	resets, err = s.BatchQueueUsageResets(nil)
	must.NoError(t, err)
	must.Eq(t, map[string]time.Time{structs.DefaultNamespace: reset}, resets, must.Sprint("the fold keeps the reset time"))
}
