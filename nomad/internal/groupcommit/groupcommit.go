// Package groupcommit group-commits writes: callers each submit a piece,
// and the pieces that arrive while an entry is being applied go out
// together in the next one. The server uses it for the clients' alloc
// status updates, one Raft entry for many clients' reports.
//
// It owns only the grouping and the hand-back of each entry's outcome to
// its callers. It must not know what a piece is or how an entry is
// written: the apply function it is given does that.
package groupcommit

import "sync"

// Committer group-commits pieces of type P: a piece goes out at once when
// no entry is being applied, and the ones that arrive meanwhile wait and
// go together in the next entry (as many as the maximum weight allows;
// weight is what a piece counts towards it). An idle cluster so sees no
// added latency, and a busy one writes one entry, and one state
// transaction, for many callers' pieces instead of one each. Nomad
// batches client alloc updates on a 50 ms timer; waiting only for the
// entry in flight keeps the timeout lateness of max_run_duration where
// it was.
type Committer[P any] struct {
	max   int
	apply func(pieces []P) (index uint64, err error)

	mu      sync.Mutex
	running bool
	queue   []*group[P]
}

// group is the pieces of one entry, and its outcome for all the callers
// that contributed to it.
type group[P any] struct {
	pieces []P
	weight int
	done   chan struct{}
	index  uint64
	err    error
}

// New returns a Committer whose entries carry at most max weight and are
// written by apply, which returns the entry's index. apply runs on one
// goroutine at a time.
func New[P any](max int, apply func(pieces []P) (index uint64, err error)) *Committer[P] {
	return &Committer[P]{max: max, apply: apply}
}

// Submit adds a piece to the next entry and waits for that entry's index
// or error. A piece heavier than the maximum goes in an entry of its own.
func (c *Committer[P]) Submit(piece P, weight int) (uint64, error) {
	c.mu.Lock()
	var g *group[P]
	if n := len(c.queue); n > 0 && c.queue[n-1].weight+weight <= c.max {
		g = c.queue[n-1]
	} else {
		g = &group[P]{done: make(chan struct{})}
		c.queue = append(c.queue, g)
	}
	g.pieces = append(g.pieces, piece)
	g.weight += weight
	if !c.running {
		c.running = true
		go c.run()
	}
	c.mu.Unlock()
	<-g.done
	return g.index, g.err
}

// Waiting returns how many entries wait behind the one being applied,
// and how many pieces they hold.
func (c *Committer[P]) Waiting() (entries, pieces int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, g := range c.queue {
		pieces += len(g.pieces)
	}
	return len(c.queue), pieces
}

// run applies the queued groups one after the other until none is left.
func (c *Committer[P]) run() {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		g := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		g.index, g.err = c.apply(g.pieces)
		close(g.done)
	}
}
