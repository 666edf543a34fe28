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
	// trackIndex keeps, in each key's record, the Raft index of the last
	// commit that closed (or would have closed) its channel; floor stands
	// for the commits before the store was restored from a snapshot.
	trackIndex bool
	floor      uint64

	// recs holds what is kept per key for the watches of many keys at
	// once (see WatchNodesAllocs) and for trackIndex. A group watch finds
	// its keys' records once, when it is registered; reading the keys'
	// indexes, unlisting the watch and firing it then follow pointers
	// instead of hashing each key again. A simulated client's query of a
	// thousand nodes does all three on every wake-up.
	recs map[string]*keyRecord
}

// keyRecord is what an allocWatch keeps for one key. Records stay when
// their last watch goes, for the next watch of the same key.
type keyRecord struct {
	at     uint64         // see allocWatch.trackIndex
	groups []*AllocsWatch // the group watches listing this key
}

// AllocsWatch is one channel for many keys: it closes at the first
// commit that changes any of them. A watcher of a hundred nodes so holds
// one channel instead of a hundred, registered and checked in one go.
type AllocsWatch struct {
	ch   chan struct{}
	recs []*keyRecord // in the order of the keys it was made for
}

// Ch returns the channel; it closes when the watch fires.
func (g *AllocsWatch) Ch() <-chan struct{} { return g.ch }

// record returns the key's record, creating it. Callers hold w.mu.
func (w *allocWatch) record(key string) *keyRecord {
	r := w.recs[key]
	if r == nil {
		if w.recs == nil {
			w.recs = make(map[string]*keyRecord)
		}
		r = new(keyRecord)
		w.recs[key] = r
	}
	return r
}

// addGroup registers a watch of keys.
func (w *allocWatch) addGroup(keys []string) *AllocsWatch {
	g := &AllocsWatch{ch: make(chan struct{}), recs: make([]*keyRecord, len(keys))}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, k := range keys {
		r := w.record(k)
		r.groups = append(r.groups, g)
		g.recs[i] = r
	}
	return g
}

// dropGroup unlists a watch from all its keys. A key is mostly listed by
// one watch at a time, so each removal looks at a slice of one or two.
func (w *allocWatch) dropGroup(g *AllocsWatch) {
	for _, r := range g.recs {
		for i := len(r.groups) - 1; i >= 0; i-- {
			if r.groups[i] == g {
				last := len(r.groups) - 1
				r.groups[i] = r.groups[last]
				r.groups[last] = nil
				r.groups = r.groups[:last]
				break
			}
		}
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

// changedAt writes, for each key of g in order, the index kept for it
// (see NodeAllocsChangedAt).
func (w *allocWatch) changedAt(g *AllocsWatch, out []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, r := range g.recs {
		out[i] = w.changedAtOf(r)
	}
}

// changedAtOf is a key's index (see NodeAllocsChangedAt) from its record,
// nil for a key never marked. Callers hold w.mu.
func (w *allocWatch) changedAtOf(r *keyRecord) uint64 {
	if r == nil {
		return w.floor
	}
	return max(r.at, w.floor)
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
	for id := range keys {
		r := w.record(id)
		r.at = max(r.at, index)
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
		if r := w.recs[id]; r != nil {
			// dropGroup takes each fired watch out of r.groups.
			for len(r.groups) > 0 {
				g := r.groups[len(r.groups)-1]
				close(g.ch)
				w.dropGroup(g)
			}
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
	w := &s.nodeAllocs
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changedAtOf(w.recs[nodeID])
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

// AllocsWatchChangedAt is NodeAllocsChangedAt for each node of a watch
// from WatchNodesAllocs, in the order they were given, into out. It may
// be called after the watch fired or was released.
func (s *StateStore) AllocsWatchChangedAt(g *AllocsWatch, out []uint64) {
	s.nodeAllocs.changedAt(g, out)
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
