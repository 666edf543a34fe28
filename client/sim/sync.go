package sim

import (
	"context"
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// statusSync sends the nodes' alloc status updates as real clients do:
// one Node.UpdateAlloc per node carrying all of its pending updates, a
// terminal status at once and anything else batched for at most
// SyncInterval. Updates of many nodes go out together, over the shared
// workers. A failed send keeps its updates (unless newer ones came) and
// retries.
type statusSync struct {
	s *Sim

	mu      sync.Mutex
	pending map[*node]map[string]*structs.Allocation
	timer   *time.Timer
	kick    chan struct{}
}

func newStatusSync(s *Sim) *statusSync {
	return &statusSync{s: s, pending: make(map[*node]map[string]*structs.Allocation), kick: make(chan struct{}, 1)}
}

// update queues the latest client view of an alloc of n.
func (y *statusSync) update(n *node, a *structs.Allocation) {
	y.mu.Lock()
	defer y.mu.Unlock()
	m := y.pending[n]
	if m == nil {
		m = make(map[string]*structs.Allocation)
		y.pending[n] = m
	}
	m[a.ID] = a
	if a.ClientTerminalStatus() {
		y.wake()
		return
	}
	if y.timer == nil {
		y.timer = time.AfterFunc(y.s.cfg.SyncInterval, y.wake)
	}
}

func (y *statusSync) wake() {
	select {
	case y.kick <- struct{}{}:
	default:
	}
}

func (y *statusSync) take() map[*node]map[string]*structs.Allocation {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.timer != nil {
		y.timer.Stop()
		y.timer = nil
	}
	out := y.pending
	y.pending = make(map[*node]map[string]*structs.Allocation)
	return out
}

// putBack requeues a failed node's updates that nothing newer replaced.
func (y *statusSync) putBack(n *node, batch []*structs.Allocation) {
	y.mu.Lock()
	defer y.mu.Unlock()
	m := y.pending[n]
	if m == nil {
		m = make(map[string]*structs.Allocation)
		y.pending[n] = m
	}
	for _, a := range batch {
		if _, newer := m[a.ID]; !newer {
			m[a.ID] = a
		}
	}
}

func (y *statusSync) run() {
	s := y.s
	for {
		select {
		case <-y.kick:
		case <-s.ctx.Done():
			return
		}
		if failed := y.flush(s.ctx, true); failed {
			t := time.NewTimer(s.cfg.RetryInterval / 2)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			y.wake()
		}
	}
}

// flush sends everything queued, one RPC per node; with pooled the RPCs
// go through the workers, otherwise straight (at shutdown). It reports
// whether any failed.
func (y *statusSync) flush(ctx context.Context, pooled bool) bool {
	s := y.s
	all := y.take()
	if len(all) == 0 {
		return false
	}
	results := make(chan bool, len(all))
	queued := 0
	for n, m := range all {
		batch := make([]*structs.Allocation, 0, len(m))
		for _, a := range m {
			batch = append(batch, a)
		}
		send := func() {
			req := &structs.AllocUpdateRequest{Alloc: batch, WriteRequest: structs.WriteRequest{Region: s.cfg.Region, AuthToken: n.secret}}
			var resp structs.GenericResponse
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			err := s.cfg.RPC.Call(cctx, "Node.UpdateAlloc", req, &resp)
			if err != nil {
				if ctx.Err() == nil {
					s.logger.Warn("alloc status update failed; will retry", "node", n.name, "error", err)
				}
				y.putBack(n, batch)
			}
			results <- err == nil
		}
		if !pooled {
			send()
			queued++
			continue
		}
		if !s.submit(send) {
			y.putBack(n, batch)
			continue
		}
		queued++
	}
	failed := false
	for range queued {
		select {
		case ok := <-results:
			failed = failed || !ok
		case <-ctx.Done():
			return true
		}
	}
	return failed
}

// flushOnShutdown gives queued updates one short try.
func (y *statusSync) flushOnShutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	y.flush(ctx, false)
}
