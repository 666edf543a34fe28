package batchqueue

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// registerInfeasible registers n one-alloc batch jobs, lets the queue
// release them, and writes the scheduler's "fits no node" verdict for
// all of them in one entry.
func registerInfeasible(h *harness, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("job-%05d", i)
		h.register(batchJob(ids[i], 50, 1))
	}
	synctest.Wait()
	now := time.Now().UnixNano()
	evals := make([]*structs.Evaluation, n)
	for i, id := range ids {
		evals[i] = &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: structs.DefaultNamespace, Priority: 50, Type: structs.JobTypeBatch,
			TriggeredBy: structs.EvalTriggerJobRegister, JobID: id, Status: structs.EvalStatusComplete,
			FailedTGAllocs: map[string]*structs.AllocMetric{"g": {Infeasible: true, InfeasibleReason: "missing drivers"}},
			CreateTime:     now, ModifyTime: now,
		}
	}
	h.write(func(i uint64) error { return h.st.UpsertEvals(i, evals) })
	synctest.Wait()
	return ids
}

// A backlog of 10,000 constrained workloads is watched by the watch
// group's shards (one goroutine per 32,768 channels: two here), not by
// one goroutine per workload, and a placement of one of them still wakes
// the queue.
func TestWatchGroup_InfeasibleBacklogGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 10_000
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, n, time.Hour))
		defer h.stop()
		before := runtime.NumGoroutine()
		ids := registerInfeasible(h, n)
		st := h.q.Status()
		must.Eq(t, n, st.Depth[structs.BatchQueueStatusConstrained])
		after := runtime.NumGoroutine()
		t.Logf("goroutines: %d before, %d with %d constrained workloads", before, after, n)
		must.LessEq(t, before+2, after, must.Sprintf("%d constrained workloads cost %d goroutines", n, after-before))

		// Still watched: a late placement takes the workload out.
		h.place(ids[n/2], 0, 1)
		s, _ := h.status(ids[n/2])
		must.Eq(t, "", s)
		s, _ = h.status(ids[0])
		must.Eq(t, structs.BatchQueueStatusConstrained, s)
	})
}

// BenchmarkRunner_ConstrainedBacklog is a round with nothing new over a
// backlog of n constrained workloads, with the goroutines the backlog's
// watches cost reported beside it.
func BenchmarkRunner_ConstrainedBacklog(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t := &testing.T{}
			h := newIdleHarness(t, cfg(structs.BatchQueueOrderFIFO, n, time.Hour))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h.q.collect(true)
			r := newRunner(ctx, h.q)
			round := func() roundResult {
				res, err := r.round(memdb.NewWatchSet(), time.Now())
				if err != nil {
					b.Fatal(err)
				}
				return res
			}
			before := runtime.NumGoroutine()
			for i := range n {
				h.register(batchJob(fmt.Sprintf("job-%05d", i), 50, 1))
			}
			for res := round(); res.again; res = round() {
			}
			for i := range n {
				h.infeasible(fmt.Sprintf("job-%05d", i))
			}
			for res := round(); res.again; res = round() {
			}
			goroutines := runtime.NumGoroutine() - before
			for b.Loop() {
				round()
			}
			b.ReportMetric(float64(goroutines), "goroutines")
		})
	}
}
