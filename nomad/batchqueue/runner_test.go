package batchqueue

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// With 64 workloads placing, a round waits on a handful of channels, not
// on every workload's, and a placement rejudges only its own workload:
// the others keep the watch sets they were judged on.
func TestRunner_RoundCostDoesNotGrowWithPlacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slots = 64
		h := newIdleHarness(t, cfg(structs.BatchQueueOrderFIFO, slots, time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		defer func() { cancel(); synctest.Wait() }()
		h.q.collect(true)
		r := newRunner(ctx, h.q)
		for i := range slots + 3 {
			h.register(batchJob(fmt.Sprintf("job-%03d", i), 50, 1))
		}
		round := func() (memdb.WatchSet, roundResult) {
			ws := memdb.NewWatchSet()
			res, err := r.round(ws, time.Now())
			must.NoError(t, err)
			return ws, res
		}
		// Release the first 64, then judge them.
		for _, res := round(); res.again; _, res = round() {
		}
		must.Eq(t, slots, len(h.releasedJobs()))
		must.MapLen(t, slots, r.released)

		judgedOn := func() map[string]uintptr {
			m := make(map[string]uintptr, len(r.released))
			for k, tr := range r.released {
				m[k] = reflect.ValueOf(tr.ws).Pointer()
			}
			return m
		}
		before := judgedOn()
		ws, _ := round()
		must.Less(t, 8, len(ws), must.Sprintf("a round with %d placing waits on %d channels", slots, len(ws)))
		must.Eq(t, before, judgedOn())

		// One placement wakes the round: the workload's watcher closes
		// a channel of the round's watch set.
		h.place("job-000", 0, 1)
		synctest.Wait()
		must.True(t, state.WatchFired(ws))
		// The round rejudges that workload only: it is done and the
		// next one is released in its slot.
		for _, res := round(); res.again; _, res = round() {
		}
		must.Eq(t, slots+1, len(h.releasedJobs()))
		after := judgedOn()
		must.MapNotContainsKey(t, after, key(structs.DefaultNamespace, "job-000"))
		for k, p := range before {
			if k != key(structs.DefaultNamespace, "job-000") {
				must.Eq(t, p, after[k], must.Sprintf("%q was judged again", k))
			}
		}

		// A round that runs right after a placement, before any watcher
		// had its turn, still sees it: the round tests the channels
		// itself and never decides on a state newer than what it knows
		// changed.
		h.place("job-001", 0, 1)
		for _, res := round(); res.again; _, res = round() {
		}
		must.Eq(t, slots+2, len(h.releasedJobs()))
		must.MapNotContainsKey(t, judgedOn(), key(structs.DefaultNamespace, "job-001"))
	})
}
