package sim

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// allocWatchTime is how long one blocking watch may wait on the server,
// as the real client's.
const allocWatchTime = 5 * time.Minute

// watchBatch follows the allocs of a batch of nodes with one blocking
// Node.GetClientAllocsBatch query, each node authenticated by its own
// secret, and fetches what changed with each node's Alloc.GetAllocs, as
// a real client does for itself.
type watchBatch struct {
	s          *Sim
	nodes      []*node
	registered atomic.Int64
	ready      chan struct{}

	// known is the AllocModifyIndex of each alloc the nodes were handed,
	// by node ID then alloc ID (this batch's goroutine only).
	known map[string]map[string]uint64
}

func (b *watchBatch) run() {
	s := b.s
	select {
	case <-b.ready:
	case <-s.ctx.Done():
		return
	}
	b.known = make(map[string]map[string]uint64, len(b.nodes))
	byID := make(map[string]*node, len(b.nodes))
	pairs := make([]structs.NodeSecret, len(b.nodes))
	for i, n := range b.nodes {
		pairs[i] = structs.NodeSecret{NodeID: n.id, SecretID: n.secret}
		byID[n.id] = n
	}
	var index uint64
	for s.ctx.Err() == nil {
		req := &structs.NodesClientAllocsRequest{
			Nodes: pairs,
			QueryOptions: structs.QueryOptions{
				Region:        s.cfg.Region,
				AuthToken:     b.nodes[0].secret,
				MinQueryIndex: index,
				MaxQueryTime:  int64(allocWatchTime),
			},
		}
		var resp structs.NodesClientAllocsResponse
		ctx, cancel := context.WithTimeout(s.ctx, allocWatchTime+30*time.Second)
		err := s.cfg.RPC.Call(ctx, "Node.GetClientAllocsBatch", req, &resp)
		cancel()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.logger.Warn("watch allocs failed", "first_node", b.nodes[0].name, "error", err)
			b.sleep(s.cfg.RetryInterval)
			continue
		}
		if resp.Index < index {
			// The servers' state was rebuilt: read everything again.
			index = 0
			continue
		}
		if !b.apply(&resp, byID) {
			if s.ctx.Err() != nil {
				return
			}
			b.sleep(s.cfg.RetryInterval)
			continue
		}
		index = resp.Index
	}
}

// apply brings the nodes in line with one answer: it fetches new and
// changed allocs and hands them, and the IDs of allocs gone, to the
// scheduler. False means a fetch failed and the answer must be read
// again.
func (b *watchBatch) apply(resp *structs.NodesClientAllocsResponse, byID map[string]*node) bool {
	s := b.s
	type pull struct {
		n   *node
		ids []string
	}
	var pulls []pull
	for nodeID, allocs := range resp.Allocs {
		n := byID[nodeID]
		if n == nil {
			continue
		}
		known := b.known[nodeID]
		var ids []string
		for id, modIdx := range allocs {
			if have, ok := known[id]; !ok || modIdx > have {
				ids = append(ids, id)
			}
		}
		for id := range known {
			if _, ok := allocs[id]; !ok {
				delete(known, id)
				s.sched.now(func() { s.removeAlloc(n, id) })
			}
		}
		if len(ids) > 0 {
			pulls = append(pulls, pull{n: n, ids: ids})
		}
	}
	if len(pulls) == 0 {
		return true
	}
	// Each job answers on results, buffered so that none blocks; the
	// wait gives up at shutdown, when queued jobs may never run.
	results := make(chan bool, len(pulls))
	var mu sync.Mutex
	for _, p := range pulls {
		queued := s.submit(func() {
			req := &structs.AllocsGetRequest{AllocIDs: p.ids, QueryOptions: structs.QueryOptions{Region: s.cfg.Region, AuthToken: p.n.secret}}
			var out structs.AllocsGetResponse
			if err := s.call("Alloc.GetAllocs", req, &out); err != nil {
				if s.ctx.Err() == nil {
					s.logger.Warn("fetch allocs failed", "node", p.n.name, "error", err)
				}
				results <- false
				return
			}
			mu.Lock()
			known := b.known[p.n.id]
			if known == nil {
				known = make(map[string]uint64)
				b.known[p.n.id] = known
			}
			for _, a := range out.Allocs {
				known[a.ID] = a.AllocModifyIndex
			}
			mu.Unlock()
			allocs := out.Allocs
			s.sched.now(func() {
				for _, a := range allocs {
					s.applyAlloc(p.n, a)
				}
			})
			results <- true
		})
		if !queued {
			return false
		}
	}
	ok := true
	for range pulls {
		select {
		case r := <-results:
			ok = ok && r
		case <-s.ctx.Done():
			return false
		}
	}
	return ok
}

func (b *watchBatch) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.s.ctx.Done():
	}
}
