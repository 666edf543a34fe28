package state

import (
	"sync"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// allocWatch hands out one channel per key (a node, or a job) that the
// next commit changing that key's allocs closes: for a job any write or
// delete of its allocs, for a node only what its client is answered with
// (see WatchNodeAllocs).
//
// memdb's own watch for "the allocs of node X" (or of job Y) is the radix
// tree node at X's prefix of the index. A node or job with no allocs has
// no such tree node, so the watch falls back to an ancestor shared with
// others: the alloc watch of every idle client in a bin-packed cluster,
// and of every job the batch queue released and waits to see placed,
// wakes on every alloc write anywhere. With a thousand idle nodes that is
// a thousand wake-ups and re-reads per placement, all for nothing.
type allocWatch struct {
	mu  sync.Mutex
	chs map[string]chan struct{}
	// at keeps, when trackIndex is set, each key's Raft index of the last
	// commit that closed (or would have closed) its channel; floor stands
	// for the commits before the store was restored from a snapshot.
	trackIndex bool
	at         map[string]uint64
	floor      uint64

	// groups are the watches of many keys at once (see
	// WatchNodesAllocs), listed under each of their keys.
	groups map[string]map[*AllocsWatch]struct{}
}

// AllocsWatch is one channel for many keys: it closes at the first
// commit that changes any of them. A watcher of a hundred nodes so holds
// one channel instead of a hundred, registered and checked in one go.
type AllocsWatch struct {
	ch   chan struct{}
	keys []string
}

// Ch returns the channel; it closes when the watch fires.
func (g *AllocsWatch) Ch() <-chan struct{} { return g.ch }

// addGroup registers a watch of keys.
func (w *allocWatch) addGroup(keys []string) *AllocsWatch {
	g := &AllocsWatch{ch: make(chan struct{}), keys: keys}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.groups == nil {
		w.groups = make(map[string]map[*AllocsWatch]struct{})
	}
	for _, k := range keys {
		m := w.groups[k]
		if m == nil {
			m = make(map[*AllocsWatch]struct{})
			w.groups[k] = m
		}
		m[g] = struct{}{}
	}
	return g
}

// dropGroup unlists a watch from all its keys; the per-key sets stay,
// for the next watch of the same keys.
func (w *allocWatch) dropGroup(g *AllocsWatch) {
	for _, k := range g.keys {
		delete(w.groups[k], g)
	}
}

// releaseGroup unlists a watch that has not fired; one that has is gone
// already.
func (w *allocWatch) releaseGroup(g *AllocsWatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-g.ch:
	default:
		w.dropGroup(g)
	}
}

// add puts the key's channel into ws, creating it if no one watches the
// key yet.
func (w *allocWatch) add(ws memdb.WatchSet, key string) {
	w.mu.Lock()
	ch, ok := w.chs[key]
	if !ok {
		if w.chs == nil {
			w.chs = make(map[string]chan struct{})
		}
		ch = make(chan struct{})
		w.chs[key] = ch
	}
	w.mu.Unlock()
	ws.Add(ch)
}

// mark records, before the commit at index becomes visible, that it
// changes the given keys' allocs. A reader that sees the commit in a
// snapshot and asks for a key's changed-at index afterwards so always
// gets the commit's index or a later one; were it raised only after the
// commit, that reader could take the key for unchanged and answer for
// the commit without it. (Raised by a commit that then fails, the index
// only costs a reader an extra read.)
func (w *allocWatch) mark(keys map[string]struct{}, index uint64) {
	if !w.trackIndex || len(keys) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at == nil {
		w.at = make(map[string]uint64)
	}
	for id := range keys {
		w.at[id] = max(w.at[id], index)
	}
}

// notify closes, after the commit, the channels of the keys it changed;
// their next watchers get new ones.
func (w *allocWatch) notify(keys map[string]struct{}) {
	if len(keys) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range keys {
		if ch, ok := w.chs[id]; ok {
			close(ch)
			delete(w.chs, id)
		}
		for g := range w.groups[id] {
			close(g.ch)
			w.dropGroup(g)
		}
	}
}

// WatchNodeAllocs adds to ws a channel that closes when a later commit
// places an alloc on the node, changes the server's side of one of its
// allocs (a new AllocModifyIndex), deletes one, deletes the node or
// changes its secret; a client's status report does not close it. Call it
// before reading the node's allocs (AllocsByNode with a nil watch set), so
// that a write landing between the two still wakes the watcher.
func (s *StateStore) WatchNodeAllocs(ws memdb.WatchSet, nodeID string) {
	s.nodeAllocs.add(ws, nodeID)
}

// NodeAllocsChangedAt returns an index at or after the last commit that
// changed what WatchNodeAllocs watches for the node: the last such commit
// in this store (raised before the commit is visible, so it covers every
// commit a snapshot taken earlier holds, and perhaps one not yet
// visible), or the index the store was restored at. Every
// AllocModifyIndex of the node's allocs is at most that index, so a
// reader that already holds the node's allocs as of a later index (and
// that called WatchNodeAllocs first) need not read them again.
func (s *StateStore) NodeAllocsChangedAt(nodeID string) uint64 {
	s.nodeAllocs.mu.Lock()
	defer s.nodeAllocs.mu.Unlock()
	return max(s.nodeAllocs.at[nodeID], s.nodeAllocs.floor)
}

// WatchNodesAllocs returns one watch for what WatchNodeAllocs watches on
// each of the nodes: its channel closes at the first later commit that
// changes any of them. Take it before reading, as WatchNodeAllocs, and
// release it with ReleaseAllocsWatch once it is no longer waited on.
func (s *StateStore) WatchNodesAllocs(nodeIDs []string) *AllocsWatch {
	return s.nodeAllocs.addGroup(nodeIDs)
}

// ReleaseAllocsWatch forgets a watch from WatchNodesAllocs that may not
// have fired; the store would otherwise keep it until one of its nodes
// changes.
func (s *StateStore) ReleaseAllocsWatch(g *AllocsWatch) { s.nodeAllocs.releaseGroup(g) }

// NodesAllocsChangedAt is NodeAllocsChangedAt for many nodes at once,
// into out (one entry per node).
func (s *StateStore) NodesAllocsChangedAt(nodeIDs []string, out []uint64) {
	s.nodeAllocs.mu.Lock()
	defer s.nodeAllocs.mu.Unlock()
	for i, id := range nodeIDs {
		out[i] = max(s.nodeAllocs.at[id], s.nodeAllocs.floor)
	}
}

// WatchJobAllocs adds to ws a channel that closes when a later commit
// writes or deletes an alloc of the job. As with WatchNodeAllocs, call it
// before reading the job's allocs.
func (s *StateStore) WatchJobAllocs(ws memdb.WatchSet, namespace, jobID string) {
	s.jobAllocs.add(ws, jobAllocsKey(namespace, jobID))
}

func jobAllocsKey(namespace, jobID string) string { return namespace + "\x00" + jobID }

// touchNodeAllocs records that the transaction changed the allocs of the
// node (or the node itself), so that its watchers wake after the commit.
func (tx *writeTxn) touchNodeAllocs(nodeID string) {
	if tx.allocNodes == nil {
		tx.allocNodes = make(map[string]struct{})
	}
	tx.allocNodes[nodeID] = struct{}{}
}

// touchJobAllocs records that the transaction changed the allocs of the
// job (or deleted the job), so that its watchers wake after the commit.
func (tx *writeTxn) touchJobAllocs(namespace, jobID string) {
	if tx.allocJobs == nil {
		tx.allocJobs = make(map[string]struct{})
	}
	tx.allocJobs[jobAllocsKey(namespace, jobID)] = struct{}{}
}

// touchAllocs records a write or delete of the alloc for the watchers of
// its node and of its job.
func (tx *writeTxn) touchAllocs(a *structs.Allocation) {
	tx.touchNodeAllocs(a.NodeID)
	tx.touchJobAllocs(a.Namespace, a.JobID)
}
