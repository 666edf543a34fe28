package client

import (
	"context"
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// allocSync sends alloc status updates to the servers: a terminal status
// (complete, failed) at once, anything else batched for at most
// SyncInterval. A failed send keeps its updates (unless a newer one for
// the same alloc came meanwhile) and retries, so nothing is lost while
// the servers are unreachable.
type allocSync struct {
	c *Client

	mu      sync.Mutex
	pending map[string]*structs.Allocation
	timer   *time.Timer
	kick    chan struct{}
}

func newAllocSync(c *Client) *allocSync {
	return &allocSync{c: c, pending: make(map[string]*structs.Allocation), kick: make(chan struct{}, 1)}
}

// update queues the latest client view of an alloc.
func (s *allocSync) update(a *structs.Allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[a.ID] = a
	if a.ClientTerminalStatus() {
		s.wake()
		return
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(s.c.cfg.SyncInterval, s.wake)
	}
}

func (s *allocSync) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *allocSync) run() {
	for {
		select {
		case <-s.kick:
		case <-s.c.ctx.Done():
			return
		}
		if err := s.flush(s.c.ctx); err != nil {
			if s.c.ctx.Err() != nil {
				return
			}
			s.c.logger.Warn("alloc status update failed; will retry", "error", err)
			if !s.c.sleep(s.c.cfg.RetryInterval / 2) {
				return
			}
			s.wake()
		}
	}
}

// take empties the queue.
func (s *allocSync) take() []*structs.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if len(s.pending) == 0 {
		return nil
	}
	batch := make([]*structs.Allocation, 0, len(s.pending))
	for _, a := range s.pending {
		batch = append(batch, a)
	}
	s.pending = make(map[string]*structs.Allocation)
	return batch
}

// flush sends everything queued; on failure the batch goes back.
func (s *allocSync) flush(ctx context.Context) error {
	batch := s.take()
	if len(batch) == 0 {
		return nil
	}
	for _, a := range batch {
		a.NodeID = s.c.node.ID
	}
	req := &structs.AllocUpdateRequest{Alloc: batch, WriteRequest: structs.WriteRequest{Region: s.c.cfg.Region, AuthToken: s.c.node.SecretID}}
	var resp structs.GenericResponse
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := s.c.rpc.Call(cctx, "Node.UpdateAlloc", req, &resp)
	if err != nil {
		s.mu.Lock()
		for _, a := range batch {
			if _, newer := s.pending[a.ID]; !newer {
				s.pending[a.ID] = a
			}
		}
		s.mu.Unlock()
	}
	return err
}

// flushOnShutdown gives queued updates one short try.
func (s *allocSync) flushOnShutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.flush(ctx)
}
