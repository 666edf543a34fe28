package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// watchNode returns a watch set holding the node's alloc watch.
func watchNode(s *StateStore, nodeID string) memdb.WatchSet {
	ws := memdb.NewWatchSet()
	s.WatchNodeAllocs(ws, nodeID)
	return ws
}

// The watch of a node's allocs wakes for writes to that node's allocs
// only. memdb's watch on an idle node's (empty) prefix wakes on every
// alloc write in the cluster, which is what this replaces.
func TestWatchNodeAllocs_WakesOnlyForItsNode(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	busy, idle := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(2, busy))
	must.NoError(t, s.UpsertNode(3, idle))

	// The premise: memdb's own watch of the idle node's allocs fires on
	// a write to another node.
	memdbWS := memdb.NewWatchSet()
	_, err := s.AllocsByNode(memdbWS, idle.ID)
	must.NoError(t, err)

	busyWS, idleWS := watchNode(s, busy.ID), watchNode(s, idle.ID)
	alloc := mockAlloc(job, busy.ID, newID(), structs.AllocClientStatusPending)
	alloc.Job = nil
	must.NoError(t, s.UpsertPlanResults(10, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: job}))
	must.True(t, WatchFired(memdbWS), must.Sprint("memdb's watch of an empty prefix is expected to be coarse"))
	must.Eq(t, 10, s.NodeAllocsChangedAt(busy.ID))
	must.Eq(t, 0, s.NodeAllocsChangedAt(idle.ID), must.Sprint("no commit touched the idle node"))
	must.True(t, WatchFired(busyWS), must.Sprint("a placement on the node wakes its watch"))
	must.False(t, WatchFired(idleWS), must.Sprint("a placement on another node must not wake an idle node's watch"))

	// A client's report of the alloc leaves AllocModifyIndex, all that the
	// node's watchers answer with, as it was: it wakes the job's watch
	// but not the node's.
	busyWS = watchNode(s, busy.ID)
	jobWS := memdb.NewWatchSet()
	s.WatchJobAllocs(jobWS, job.Namespace, job.ID)
	must.NoError(t, s.UpdateAllocsFromClient(11, []*structs.Allocation{clientUpdate(alloc, structs.AllocClientStatusRunning)}))
	must.True(t, WatchFired(jobWS))
	must.False(t, WatchFired(busyWS), must.Sprint("a client's own report must not wake its node's watch"))
	must.Eq(t, 10, s.NodeAllocsChangedAt(busy.ID), must.Sprint("nor move the node's changed-at index"))
	stored, err := s.AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, 10, stored.AllocModifyIndex)

	// A server-side change of the alloc (a stop) wakes the node's watch.
	stop := stored.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	must.NoError(t, s.UpsertAllocs(12, []*structs.Allocation{stop}))
	must.True(t, WatchFired(busyWS))
	must.Eq(t, 12, s.NodeAllocsChangedAt(busy.ID))
	must.False(t, WatchFired(idleWS))

	// Garbage collection of the alloc wakes it too.
	busyWS = watchNode(s, busy.ID)
	must.NoError(t, s.DeleteEval(13, nil, []string{alloc.ID}))
	must.True(t, WatchFired(busyWS))
	must.Eq(t, 13, s.NodeAllocsChangedAt(busy.ID))
	must.False(t, WatchFired(idleWS))

	// Deleting the idle node wakes its watcher, which then reads the node
	// gone; a write that changes nothing of a node wakes no one.
	otherWS := watchNode(s, busy.ID)
	must.NoError(t, s.DeleteNode(14, []string{idle.ID}))
	must.True(t, WatchFired(idleWS))
	must.False(t, WatchFired(otherWS))
}

// The watch of a job's allocs wakes for that job's allocs only: the batch
// queue waits on it for each released job, most of which have no alloc
// yet.
func TestWatchJobAllocs_WakesOnlyForItsJob(t *testing.T) {
	s := testStore(t)
	placed, waiting := mockBatchJob("placed"), mockBatchJob("waiting")
	must.NoError(t, s.UpsertJob(1, placed))
	must.NoError(t, s.UpsertJob(2, waiting))
	node := mockNode()
	must.NoError(t, s.UpsertNode(3, node))

	memdbWS := memdb.NewWatchSet()
	_, err := s.AllocsByJob(memdbWS, waiting.Namespace, waiting.ID, true)
	must.NoError(t, err)
	placedWS := memdb.NewWatchSet()
	s.WatchJobAllocs(placedWS, placed.Namespace, placed.ID)
	waitingWS := memdb.NewWatchSet()
	s.WatchJobAllocs(waitingWS, waiting.Namespace, waiting.ID)
	// Same job ID in another namespace: a different key.
	otherNS := memdb.NewWatchSet()
	s.WatchJobAllocs(otherNS, "other", placed.ID)

	alloc := mockAlloc(placed, node.ID, newID(), structs.AllocClientStatusPending)
	alloc.Job = nil
	must.NoError(t, s.UpsertPlanResults(10, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: placed}))
	must.True(t, WatchFired(memdbWS), must.Sprint("memdb's watch of a job with no allocs is expected to be coarse"))
	must.True(t, WatchFired(placedWS))
	must.False(t, WatchFired(waitingWS), must.Sprint("a placement of another job must not wake this job's watch"))
	must.False(t, WatchFired(otherNS))

	placedWS = memdb.NewWatchSet()
	s.WatchJobAllocs(placedWS, placed.Namespace, placed.ID)
	must.NoError(t, s.DeleteEval(11, nil, []string{alloc.ID}))
	must.True(t, WatchFired(placedWS), must.Sprint("garbage collection of the job's alloc wakes its watch"))
	must.False(t, WatchFired(waitingWS))

	// Purging a job that never had an alloc wakes its watcher (which then
	// reads it gone) and drops its channel.
	must.NoError(t, s.DeleteJob(12, waiting.Namespace, waiting.ID))
	must.True(t, WatchFired(waitingWS))
	must.MapNotContainsKey(t, s.jobAllocs.chs, jobAllocsKey(waiting.Namespace, waiting.ID))
}

// A restored store knows nothing of the commits before its snapshot, so
// every node counts as changed at the snapshot's index.
func TestNodeAllocsChangedAt_RestoredStoreStartsAtTheSnapshot(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	n := mockNode()
	must.NoError(t, s.UpsertNode(2, n))
	a := mockAlloc(job, n.ID, newID(), structs.AllocClientStatusPending)
	must.NoError(t, s.UpsertAllocs(7, []*structs.Allocation{a}))
	must.NoError(t, s.UpsertJob(9, mockJob("later")))
	restored := restoreCopy(t, s)
	must.Eq(t, 9, restored.NodeAllocsChangedAt(n.ID))
	must.Eq(t, 9, restored.NodeAllocsChangedAt("never-seen"))
	b := mockAlloc(job, n.ID, newID(), structs.AllocClientStatusPending)
	must.NoError(t, restored.UpsertAllocs(20, []*structs.Allocation{b}))
	must.Eq(t, 20, restored.NodeAllocsChangedAt(n.ID))
}

// A node's alloc watch also wakes when the node is re-registered with a
// new secret (a query authenticated with the old one must find out), and
// not when it re-registers with the same one.
func TestWatchNodeAllocs_WakesOnANewSecret(t *testing.T) {
	s := testStore(t)
	n := mockNode()
	must.NoError(t, s.UpsertNode(2, n))

	ws := watchNode(s, n.ID)
	same := n.Copy()
	must.NoError(t, s.UpsertNode(3, same))
	must.False(t, WatchFired(ws), must.Sprint("re-registering with the same secret changes nothing a query answers"))
	must.Eq(t, 0, s.NodeAllocsChangedAt(n.ID))

	rekeyed := n.Copy()
	rekeyed.SecretID = newID()
	must.NoError(t, s.UpsertNode(4, rekeyed))
	must.True(t, WatchFired(ws), must.Sprint("a new secret wakes the node's alloc watch"))
	must.Eq(t, 4, s.NodeAllocsChangedAt(n.ID))
}

// One watch of many nodes fires at the first commit that changes any of
// them, not for others, and leaves nothing registered once it fired or
// was released.
func TestWatchNodesAllocs_OneChannelForManyNodes(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	a, b, other := mockNode(), mockNode(), mockNode()
	for i, n := range []*structs.Node{a, b, other} {
		must.NoError(t, s.UpsertNode(uint64(2+i), n))
	}
	place := func(index uint64, nodes ...*structs.Node) {
		var allocs []*structs.Allocation
		for _, n := range nodes {
			al := mockAlloc(job, n.ID, newID(), structs.AllocClientStatusPending)
			al.Job = nil
			allocs = append(allocs, al)
		}
		must.NoError(t, s.UpsertPlanResults(index, &structs.ApplyPlanResultsRequest{AllocsUpdated: allocs, Job: job}))
	}
	fired := func(g *AllocsWatch) bool {
		select {
		case <-g.Ch():
			return true
		default:
			return false
		}
	}
	registered := func() int {
		s.nodeAllocs.mu.Lock()
		defer s.nodeAllocs.mu.Unlock()
		n := 0
		for _, r := range s.nodeAllocs.recs {
			n += len(r.groups)
		}
		return n
	}

	g := s.WatchNodesAllocs([]string{a.ID, b.ID})
	must.Eq(t, 2, registered())
	place(10, other)
	must.False(t, fired(g), must.Sprint("a placement on a node it does not watch"))
	place(11, a, b)
	must.True(t, fired(g), must.Sprint("a placement on both of its nodes closes it, once"))
	must.Eq(t, 0, registered(), must.Sprint("a fired watch is unlisted from all its nodes"))
	s.ReleaseAllocsWatch(g) // releasing a fired watch is harmless

	g2 := s.WatchNodesAllocs([]string{a.ID, b.ID})
	place(12, b)
	must.True(t, fired(g2))

	g3 := s.WatchNodesAllocs([]string{a.ID, other.ID})
	must.Eq(t, 2, registered())
	s.ReleaseAllocsWatch(g3)
	must.Eq(t, 0, registered(), must.Sprint("a released watch is unlisted"))
	place(13, a)
	must.False(t, fired(g3), must.Sprint("a released watch never fires"))

	out := make([]uint64, 3)
	g4 := s.WatchNodesAllocs([]string{a.ID, b.ID, other.ID})
	s.AllocsWatchChangedAt(g4, out)
	must.Eq(t, []uint64{13, 12, 10}, out)
	s.ReleaseAllocsWatch(g4)
	s.AllocsWatchChangedAt(g4, out)
	must.Eq(t, []uint64{13, 12, 10}, out, must.Sprint("readable after release"))

	// A node listed twice is unlisted twice.
	g5 := s.WatchNodesAllocs([]string{a.ID, a.ID, b.ID})
	must.Eq(t, 3, registered())
	place(14, a)
	must.True(t, fired(g5))
	must.Eq(t, 0, registered())
	g6 := s.WatchNodesAllocs([]string{b.ID, b.ID})
	s.ReleaseAllocsWatch(g6)
	must.Eq(t, 0, registered())
}

// BenchmarkAllocsWatch_ThousandNodes is one wake-up of a simulated
// client's query of a thousand nodes: register the watch, read the
// nodes' changed-at indexes, a commit on one of them fires it.
func BenchmarkAllocsWatch_ThousandNodes(b *testing.B) {
	w := &allocWatch{trackIndex: true}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = newID()
		w.mark(map[string]struct{}{keys[i]: {}}, uint64(i+1))
	}
	out := make([]uint64, len(keys))
	changed := make(map[string]struct{}, 1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g := w.addGroup(keys)
		w.changedAt(g, out)
		clear(changed)
		changed[keys[i%len(keys)]] = struct{}{}
		w.mark(changed, uint64(len(keys)+i+1))
		w.notify(changed)
		w.releaseGroup(g)
	}
}
