package state

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// groupTarget is what both a store and a group write take.
type groupTarget interface {
	UpsertJobWithSubmission(index uint64, job *structs.Job, sub *structs.JobSubmission, eval *structs.Evaluation) error
	UpsertEvals(index uint64, evals []*structs.Evaluation) error
	UpdateAllocsFromClient(index uint64, allocs []*structs.Allocation) error
	UpsertPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error
}

// groupScenario returns the writes of a small cluster's life, each to be
// applied at its own index, built fresh (writes own their arguments):
// jobs registered and re-registered, plans, client reports that finish
// and fail allocs, eval updates.
func groupScenario(nodeID string) []func(w groupTarget, index uint64) error {
	web, batch := mockJob("web"), mockBatchJob("crunch")
	webEval, batchEval := mockEval(web, structs.EvalStatusPending), mockEval(batch, structs.EvalStatusPending)
	webEval.ID, batchEval.ID = "11111111-0000-0000-0000-000000000001", "11111111-0000-0000-0000-000000000002"
	webAlloc := mockAlloc(web, nodeID, webEval.ID, structs.AllocClientStatusPending)
	batchAlloc := mockAlloc(batch, nodeID, batchEval.ID, structs.AllocClientStatusPending)
	webAlloc.ID, batchAlloc.ID = "22222222-0000-0000-0000-000000000001", "22222222-0000-0000-0000-000000000002"
	web2 := mockJob("web")
	web2.Meta = map[string]string{"v": "2"}
	web2Eval := mockEval(web2, structs.EvalStatusPending)
	web2Eval.ID = "11111111-0000-0000-0000-000000000003"
	done := func(e *structs.Evaluation) *structs.Evaluation {
		c := e.Copy()
		c.Status = structs.EvalStatusComplete
		return c
	}
	return []func(w groupTarget, index uint64) error{
		func(w groupTarget, i uint64) error {
			return w.UpsertJobWithSubmission(i, web, &structs.JobSubmission{Source: "job web {}", Format: "hcl2"}, webEval)
		},
		func(w groupTarget, i uint64) error { return w.UpsertJobWithSubmission(i, batch, nil, batchEval) },
		func(w groupTarget, i uint64) error {
			return w.UpsertPlanResults(i, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{webAlloc}, Job: web, EvalID: webEval.ID})
		},
		func(w groupTarget, i uint64) error { return w.UpsertEvals(i, []*structs.Evaluation{done(webEval)}) },
		func(w groupTarget, i uint64) error {
			return w.UpdateAllocsFromClient(i, []*structs.Allocation{clientUpdate(webAlloc, structs.AllocClientStatusRunning)})
		},
		func(w groupTarget, i uint64) error {
			return w.UpsertPlanResults(i, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{batchAlloc}, Job: batch, EvalID: batchEval.ID,
				Evals: []*structs.Evaluation{done(batchEval)}})
		},
		func(w groupTarget, i uint64) error { return w.UpsertJobWithSubmission(i, web2, nil, web2Eval) },
		func(w groupTarget, i uint64) error {
			return w.UpdateAllocsFromClient(i, []*structs.Allocation{clientUpdate(batchAlloc, structs.AllocClientStatusRunning)})
		},
		func(w groupTarget, i uint64) error {
			return w.UpdateAllocsFromClient(i, []*structs.Allocation{clientUpdate(batchAlloc, structs.AllocClientStatusFailed),
				clientUpdate(webAlloc, structs.AllocClientStatusComplete)})
		},
		func(w groupTarget, i uint64) error { return w.UpsertEvals(i, []*structs.Evaluation{done(web2Eval)}) },
	}
}

// fedChange is a change feed entry in a form tests can compare.
type fedChange struct {
	Index         uint64
	Table         string
	Before, After any
}

func feedInto(s *StateStore, out *[]fedChange) {
	s.SetChangeFeed(func(index uint64, changes memdb.Changes) {
		for _, c := range changes {
			*out = append(*out, fedChange{Index: index, Table: c.Table, Before: c.Before, After: c.After})
		}
	})
}

// TestGroupWrite_SameStateAsOneWriteEach applies the same entries one
// write each and in groups of every size, and requires the same rows in
// every table (indexes, job versions, summaries and statuses included)
// and the same change feed, entry by entry.
func TestGroupWrite_SameStateAsOneWriteEach(t *testing.T) {
	node := mockNode()
	setup := func() (*StateStore, *[]fedChange) {
		s := testStore(t)
		must.NoError(t, s.UpsertNode(5, node.Copy()))
		var feed []fedChange
		feedInto(s, &feed)
		return s, &feed
	}
	want, wantFeed := setup()
	for i, op := range groupScenario(node.ID) {
		must.NoError(t, op(want, uint64(10+i)))
	}
	for _, size := range []int{2, 3, 4, 10} {
		t.Run(fmt.Sprintf("groups of %d", size), func(t *testing.T) {
			got, gotFeed := setup()
			ops := groupScenario(node.ID)
			for start := 0; start < len(ops); start += size {
				b := got.BeginGroupWrite()
				for i := start; i < min(start+size, len(ops)); i++ {
					must.NoError(t, ops[i](b, uint64(10+i)))
				}
				must.NoError(t, b.Commit())
			}
			must.Eq(t, dumpState(t, &want.reader), dumpState(t, &got.reader))
			must.Eq(t, indexTable(t, want), indexTable(t, got))
			must.Eq(t, sortedFeed(*wantFeed), sortedFeed(*gotFeed))
		})
	}
}

// TestGroupWrite_VisibleAndWokenAtCommit: readers see none of a group's
// writes, and a node's alloc watchers are not woken, until it commits.
func TestGroupWrite_VisibleAndWokenAtCommit(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(5, node))
	ws := memdb.NewWatchSet()
	s.WatchNodeAllocs(ws, node.ID)
	ops := groupScenario(node.ID)

	b := s.BeginGroupWrite()
	for i, op := range ops[:3] {
		must.NoError(t, op(b, uint64(10+i)))
	}
	jobs, err := s.Jobs(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jobs)
	must.False(t, WatchFired(ws))
	must.NoError(t, b.Commit())

	must.True(t, WatchFired(ws))
	jobs, err = s.Jobs(nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, jobs)
	latest, err := s.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 12, latest)
	at := s.NodeAllocsChangedAt(node.ID)
	must.Eq(t, 12, at, must.Sprint("the node's allocs changed with the plan, the group's third entry"))
}

// TestGroupWrite_SpoiltByAFailedEntry: after an entry fails, later ones
// are refused, Commit refuses, and Abort leaves nothing behind.
func TestGroupWrite_SpoiltByAFailedEntry(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(5, node))
	ops := groupScenario(node.ID)
	b := s.BeginGroupWrite()
	must.NoError(t, ops[0](b, 10))
	orphan := mockJob("orphan")
	orphan.Namespace = "nowhere"
	err := b.UpsertJobWithSubmission(11, orphan, nil, nil)
	must.ErrorContains(t, err, `nonexistent namespace "nowhere"`)
	must.ErrorContains(t, ops[1](b, 12), "spoilt")
	must.Error(t, b.Commit())
	b.Abort()

	jobs, err := s.Jobs(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jobs)
	latest, err := s.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 5, latest)
	// The store takes writes again.
	must.NoError(t, ops[0](s, 13))
}

// sortedFeed orders each index's changes: within one commit their order
// follows map iteration (the index table rows), in either kind of write.
func sortedFeed(feed []fedChange) []fedChange {
	out := slices.Clone(feed)
	key := func(c fedChange) string { return fmt.Sprintf("%s %+v %+v", c.Table, c.After, c.Before) }
	slices.SortStableFunc(out, func(a, b fedChange) int {
		if a.Index != b.Index {
			return cmp.Compare(a.Index, b.Index)
		}
		return strings.Compare(key(a), key(b))
	})
	return out
}

// TestGroupWrite_QueuedHandsBackTheRouting: each write hands back which
// of the evals it stored wait in the batch queue: a new one it routed
// there, one that replaced the queued eval, and a rewrite of an eval
// still held; not a service eval, and not one already released.
func TestGroupWrite_QueuedHandsBackTheRouting(t *testing.T) {
	s := queueOnStore(t)
	crunch, web := mockBatchJob("crunch"), mockJob("web")
	first, webEval := mockEval(crunch, structs.EvalStatusPending), mockEval(web, structs.EvalStatusPending)
	again := mockEval(crunch, structs.EvalStatusPending)

	g := s.BeginGroupWrite()
	must.NoError(t, g.UpsertJobWithSubmission(10, crunch, nil, first))
	must.True(t, g.Queued(first.ID), must.Sprint("a new batch eval is routed to the queue"))
	must.NoError(t, g.UpsertJobWithSubmission(11, web, nil, webEval))
	must.False(t, g.Queued(webEval.ID), must.Sprint("a service eval goes to the broker"))
	must.False(t, g.Queued(first.ID), must.Sprint("the answer is the last write's"))
	must.NoError(t, g.UpsertEvals(12, []*structs.Evaluation{again}))
	must.True(t, g.Queued(again.ID), must.Sprint("the replacing eval waits in the queue"))
	must.NoError(t, g.UpsertEvals(13, []*structs.Evaluation{again.Copy()}))
	must.True(t, g.Queued(again.ID), must.Sprint("a rewrite of a held eval stays held"))
	must.NoError(t, g.Commit())

	_, err := s.BatchQueueApply(14, &structs.BatchQueueReleaseRequest{ReleaseTime: 1,
		Release: []structs.BatchQueueRef{{Namespace: crunch.Namespace, JobID: crunch.ID, EvalID: again.ID}}})
	must.NoError(t, err)
	must.False(t, s.BatchQueueHoldsEval(again), must.Sprint("released by the queue"))
	g = s.BeginGroupWrite()
	must.NoError(t, g.UpsertEvals(15, []*structs.Evaluation{again.Copy()}))
	must.False(t, g.Queued(again.ID), must.Sprint("a released eval is the broker's"))
	must.NoError(t, g.Commit())
}
