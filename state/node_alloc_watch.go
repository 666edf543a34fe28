package state

import (
	"sync"

	memdb "github.com/hashicorp/go-memdb"
)

// nodeAllocWatch hands out one channel per node that the next commit
// writing or deleting one of the node's allocs closes.
//
// memdb's own watch for "the allocs of node X" is the radix tree node at
// X's prefix of the node index. A node with no allocs has no such tree
// node, so the watch falls back to an ancestor shared with other nodes:
// the alloc watch of every idle client in a bin-packed cluster wakes on
// every alloc write anywhere. With a thousand idle nodes that is a
// thousand wake-ups and re-reads per placement, all for nothing.
type nodeAllocWatch struct {
	mu  sync.Mutex
	chs map[string]chan struct{}
}

// add puts the node's channel into ws, creating it if no one watches the
// node yet.
func (w *nodeAllocWatch) add(ws memdb.WatchSet, nodeID string) {
	w.mu.Lock()
	ch, ok := w.chs[nodeID]
	if !ok {
		if w.chs == nil {
			w.chs = make(map[string]chan struct{})
		}
		ch = make(chan struct{})
		w.chs[nodeID] = ch
	}
	w.mu.Unlock()
	ws.Add(ch)
}

// notify closes the channels of the given nodes; their next watchers get
// new ones.
func (w *nodeAllocWatch) notify(nodes map[string]struct{}) {
	if len(nodes) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range nodes {
		if ch, ok := w.chs[id]; ok {
			close(ch)
			delete(w.chs, id)
		}
	}
}

// WatchNodeAllocs adds to ws a channel that closes when a later commit
// writes or deletes an alloc of the node, or deletes the node. Call it
// before reading the node's allocs (AllocsByNode with a nil watch set), so
// that a write landing between the two still wakes the watcher.
func (s *StateStore) WatchNodeAllocs(ws memdb.WatchSet, nodeID string) {
	s.nodeAllocs.add(ws, nodeID)
}

// touchNodeAllocs records that the transaction changed the allocs of the
// node (or the node itself), so that its watchers wake after the commit.
func (tx *writeTxn) touchNodeAllocs(nodeID string) {
	if tx.allocNodes == nil {
		tx.allocNodes = make(map[string]struct{})
	}
	tx.allocNodes[nodeID] = struct{}{}
}
