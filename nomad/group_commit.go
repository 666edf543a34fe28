package nomad

import (
	"sync"

	"github.com/nomadq/nomadq/structs"
)

// groupCommit group-commits writes to Raft: a write goes out at once when
// none is being applied, and the ones that arrive meanwhile wait and go
// together in the next entry (as many as max allows; weight is what a
// piece counts towards it). An idle cluster so sees no added latency,
// and a busy one writes one entry, and one state transaction, for many
// callers' pieces instead of one each. Nomad batches client alloc
// updates on a 50 ms timer; waiting only for the entry in flight keeps
// the timeout lateness of max_run_duration where it was.
type groupCommit[P any] struct {
	max int
	// apply writes one entry for the pieces and returns its index.
	apply func(pieces []P) (index uint64, err error)

	mu      sync.Mutex
	running bool
	queue   []*commitGroup[P]
}

// commitGroup is the pieces of one entry, and its outcome for all the
// callers that contributed to it.
type commitGroup[P any] struct {
	pieces []P
	weight int
	done   chan struct{}
	index  uint64
	err    error
}

// submit adds a piece to the next entry and waits for that entry's index
// or error.
func (c *groupCommit[P]) submit(piece P, weight int) (uint64, error) {
	c.mu.Lock()
	var g *commitGroup[P]
	if n := len(c.queue); n > 0 && c.queue[n-1].weight+weight <= c.max {
		g = c.queue[n-1]
	} else {
		g = &commitGroup[P]{done: make(chan struct{})}
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

// run applies the queued groups one after the other until none is left.
func (c *groupCommit[P]) run() {
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

// maxAllocUpdateBatch caps the allocs one Raft entry of client updates
// carries.
const maxAllocUpdateBatch = 1024

// applyAllocUpdates writes clients' alloc updates, and the evals they
// call for, as one entry.
func (s *Server) applyAllocUpdates(pieces []*structs.AllocUpdateRequest) (uint64, error) {
	req := pieces[0]
	if len(pieces) > 1 {
		req = &structs.AllocUpdateRequest{}
		for _, p := range pieces {
			req.Alloc = append(req.Alloc, p.Alloc...)
			req.Evals = append(req.Evals, p.Evals...)
		}
	}
	_, index, err := s.raftApply(structs.AllocClientUpdateRequestType, req)
	return index, err
}
