package batchqueue

import (
	"math"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// A namespace's decayed usage does not drop when the garbage collector
// deletes its finished batch allocs: the usage read after the deletion
// is within 1% of the one read before (the fold is exact, but the two
// reads are a moment apart). A reset after the collection zeroes it.
func TestQueue_UsageKeepsCollectedAllocs(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	st.SetBatchQueueRouter(Route)
	h := &harness{t: t, st: st, evals: make(map[string]string)}
	bq := cfg(structs.BatchQueueOrderMultifactor, 1, time.Hour)
	bq.Multifactor = structs.BatchQueueMultifactor{FairShareWeight: 1, UsageHalfLife: time.Hour}
	h.setConfig(bq)
	bq.Canonicalize()
	node := h.node()
	h.write(func(i uint64) error {
		return st.UpsertNamespaces(i, []*structs.Namespace{{Name: "qa"}, {Name: "qb"}})
	})
	q := New(Config{State: func() *state.StateStore { return st }, Commit: h})
	q.view = view{settings: bq, store: st}

	// Two runs of qa's jobs ended a few minutes ago; qb never ran.
	end := time.Now().Add(-5 * time.Minute)
	var ids []string
	for i, id := range []string{"a", "b"} {
		job := sized("qa", id, 250, 0)
		h.register(job)
		a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "qa", JobID: id, Job: job, TaskGroup: "g",
			Name: id + ".g[0]", NodeID: node.ID, EvalID: h.evals[id], DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending,
			AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
				"t": {Cpu: structs.AllocatedCpuResources{CpuShares: 10}, Memory: structs.AllocatedMemoryResources{MemoryMB: 250}},
			}}}
		h.write(func(i uint64) error { return st.UpsertAllocs(i, []*structs.Allocation{a}) })
		done := &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete,
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateDead,
				StartedAt: end.Add(-time.Duration(i+1) * 10 * time.Minute), FinishedAt: end}},
			ModifyTime: end.UnixNano()}
		h.write(func(i uint64) error { return st.UpdateAllocsFromClient(i, []*structs.Allocation{done}) })
		ids = append(ids, a.ID)
	}
	usageOf := func(ns string) float64 {
		t.Helper()
		for _, u := range q.Usage() {
			if u.Namespace == ns {
				return u.Usage
			}
		}
		t.Fatalf("no usage row for %s", ns)
		return 0
	}
	before := usageOf("qa")
	// 0.25 of the cluster for 10 and 20 minutes, some minutes ago: a
	// few hundred share-seconds.
	must.Greater(t, 100, before)

	h.write(func(i uint64) error { return st.DeleteEval(i, nil, ids) })
	allocs, err := st.AllocsByJob(nil, "qa", "a", true)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs, must.Sprint("collected"))
	after := usageOf("qa")
	must.True(t, math.Abs(after-before) <= before/100, must.Sprintf("usage %v before the collection, %v after", before, after))
	must.Eq(t, 0, usageOf("qb"))

	h.write(func(i uint64) error {
		return st.BatchQueueUsageReset(i, &structs.BatchQueueUsageResetRequest{Time: time.Now().UnixNano(),
			WriteRequest: structs.WriteRequest{Namespace: "qa"}})
	})
	must.Eq(t, 0, usageOf("qa"))
}

// Usages adds a namespace's folded usage, decayed to now, to that of its
// spans, and lists a namespace that has folded usage only.
func TestUsages_AddsFoldedUsage(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	h := time.Hour
	spans := map[string][]Span{"qa": {{Share: 1, Start: now.Add(-time.Hour), End: now.Add(-30 * time.Minute)}}}
	folded := map[string]structs.BatchQueueFoldedUsage{
		"qa": {Usage: 1000, At: now.Add(-time.Hour).UnixNano()},
		"qb": {Usage: 800, At: now.UnixNano()},
	}
	got := Usages(spans, folded, nil, nil, nil, now, h)
	must.Len(t, 2, got)
	want := DecayedUsage(spans["qa"], now, time.Time{}, h) + 500 // 1000 an hour ago, halved since
	must.True(t, math.Abs(got[0].Usage-want) < 1e-9, must.Sprint(got[0].Usage))
	must.Eq(t, "qb", got[1].Namespace)
	must.Eq(t, 800, got[1].Usage)
}
