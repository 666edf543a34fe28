package nomad

import (
	"sync"

	"github.com/nomadq/nomadq/structs"
)

// maxAllocUpdateBatch caps the allocs one Raft entry of client updates
// carries; more wait for the next entry.
const maxAllocUpdateBatch = 1024

// allocUpdateBatcher group-commits the clients' alloc status updates: an
// update goes to Raft at once when none is being applied, and the ones
// that arrive meanwhile wait and go together in the next entry. An idle
// cluster so sees no added latency, and a busy one (a thousand nodes
// reporting at once) writes one entry, and one state transaction, for
// many nodes' updates rather than one each. Nomad batches the same
// updates on a 50 ms timer; waiting only for the entry in flight keeps
// the timeout lateness of max_run_duration where it was.
type allocUpdateBatcher struct {
	apply func(*structs.AllocUpdateRequest) (uint64, error)

	mu      sync.Mutex
	running bool
	queue   []*allocUpdateGroup
}

// allocUpdateGroup is the updates of one entry, and its outcome for all
// the callers that contributed to it.
type allocUpdateGroup struct {
	req   structs.AllocUpdateRequest
	done  chan struct{}
	index uint64
	err   error
}

// submit adds updates (and the evals they call for) to the next entry
// and waits for that entry to be applied.
func (b *allocUpdateBatcher) submit(allocs []*structs.Allocation, evals []*structs.Evaluation) (uint64, error) {
	b.mu.Lock()
	var g *allocUpdateGroup
	if n := len(b.queue); n > 0 && len(b.queue[n-1].req.Alloc)+len(allocs) <= maxAllocUpdateBatch {
		g = b.queue[n-1]
	} else {
		g = &allocUpdateGroup{done: make(chan struct{})}
		b.queue = append(b.queue, g)
	}
	g.req.Alloc = append(g.req.Alloc, allocs...)
	g.req.Evals = append(g.req.Evals, evals...)
	if !b.running {
		b.running = true
		go b.run()
	}
	b.mu.Unlock()
	<-g.done
	return g.index, g.err
}

// run applies the queued groups one after the other until none is left.
func (b *allocUpdateBatcher) run() {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		g := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		b.mu.Unlock()
		g.index, g.err = b.apply(&g.req)
		close(g.done)
	}
}
