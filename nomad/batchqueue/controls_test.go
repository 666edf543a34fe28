package batchqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// The listing promises the order the line releases in: for random lines
// with random holds, releases and tops, in every order, the queued
// entries `nomad queue jobs` lists (held ones left out) are released in
// that order when every slot is free, and no held entry is released.
// The line is the runner's own (heap, store reads, tops), the listing
// the API's; the seed is fixed, so a failure names a case that repeats.
func TestControls_ListingIsReleaseOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 2))
	namespaces := []string{structs.DefaultNamespace, "a", "b"}
	for _, order := range []string{structs.BatchQueueOrderFIFO, structs.BatchQueueOrderPriority, structs.BatchQueueOrderFair} {
		for iter := range 200 {
			name := fmt.Sprintf("%s/%d", order, iter)
			n := 1 + rng.IntN(16)
			h := newIdleHarness(t, cfg(order, n, 0))
			h.write(func(i uint64) error {
				return h.st.UpsertNamespaces(i, []*structs.Namespace{{Name: "a"}, {Name: "b"}})
			})
			if order == structs.BatchQueueOrderFair {
				// Shares that differ: live allocs of random sizes.
				node := h.node()
				for i, ns := range namespaces {
					if mb := rng.IntN(3) * 100; mb > 0 {
						h.running(node, sized(ns, fmt.Sprintf("run-%d", i), mb, 0))
					}
				}
			}
			var jobs []*structs.Job
			for i := range n {
				j := sized(namespaces[rng.IntN(len(namespaces))], fmt.Sprintf("j%02d", i), 10+rng.IntN(4)*50, 0)
				j.Priority = []int{10, 50, 90}[rng.IntN(3)]
				h.register(j)
				jobs = append(jobs, j)
			}
			for range rng.IntN(2 * n) {
				j := jobs[rng.IntN(n)]
				op := []string{structs.BatchQueueHold, structs.BatchQueueUnhold, structs.BatchQueueTop, structs.BatchQueueTop}[rng.IntN(4)]
				must.NoError(t, h.control(j.Namespace, j.ID, op), must.Sprint(name))
			}

			// The listing a leader shows before its round releases.
			bq := cfg(order, n, 0)
			bq.Canonicalize()
			h.q.view = view{settings: bq, store: h.st}
			var listed, held []string
			for _, e := range h.q.List() {
				must.Eq(t, structs.BatchQueueStatusQueued, e.Status, must.Sprint(name))
				if e.Reason == ReasonHeld {
					held = append(held, e.JobID)
					continue
				}
				listed = append(listed, e.JobID)
			}

			r := &runner{q: h.q}
			_, err := r.round(memdb.NewWatchSet(), time.Now())
			must.NoError(t, err, must.Sprint(name))
			must.Eq(t, listed, h.released, must.Sprintf("%s: listed (held %v)", name, held))
		}
	}
}
