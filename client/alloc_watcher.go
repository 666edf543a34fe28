package client

import (
	"context"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// allocWatchTime is how long one blocking query of the node's allocs may
// wait on the server.
const allocWatchTime = 5 * time.Minute

// watchAllocs follows the node's allocs with a blocking query and brings
// the alloc runners in line: new allocs start, changed ones are updated,
// and ones the servers garbage collected are destroyed.
func (c *Client) watchAllocs() {
	select {
	case <-c.registered:
	case <-c.ctx.Done():
		return
	}
	known := make(map[string]uint64)
	for _, ar := range c.allRunners() {
		known[ar.ID()] = ar.Alloc().AllocModifyIndex
	}
	var index uint64
	for c.ctx.Err() == nil {
		req := &structs.NodeSpecificRequest{
			NodeID:   c.node.ID,
			SecretID: c.node.SecretID,
			QueryOptions: structs.QueryOptions{
				Region:        c.cfg.Region,
				AuthToken:     c.node.SecretID,
				MinQueryIndex: index,
				MaxQueryTime:  int64(allocWatchTime),
			},
		}
		var resp structs.NodeClientAllocsResponse
		ctx, cancel := context.WithTimeout(c.ctx, allocWatchTime+30*time.Second)
		err := c.rpc.Call(ctx, "Node.GetClientAllocs", req, &resp)
		cancel()
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			c.logger.Warn("watch allocs failed", "error", err)
			c.sleep(c.cfg.RetryInterval)
			continue
		}
		if resp.Index < index {
			// The servers' index went back (their state was rebuilt): read
			// everything again.
			index = 0
		}
		var pull []string
		for id, modIdx := range resp.Allocs {
			if have, ok := known[id]; !ok || modIdx > have {
				pull = append(pull, id)
			}
		}
		for id := range known {
			if _, ok := resp.Allocs[id]; !ok {
				delete(known, id)
				c.removeAlloc(id)
			}
		}
		if len(pull) > 0 {
			allocs, err := c.fetchAllocs(pull)
			if err != nil {
				if c.ctx.Err() != nil {
					return
				}
				c.logger.Warn("fetch allocs failed", "error", err)
				c.sleep(c.cfg.RetryInterval)
				continue
			}
			for _, a := range allocs {
				known[a.ID] = a.AllocModifyIndex
			}
			c.applyAllocs(allocs)
		}
		index = resp.Index
	}
}

func (c *Client) fetchAllocs(ids []string) ([]*structs.Allocation, error) {
	req := &structs.AllocsGetRequest{AllocIDs: ids, QueryOptions: structs.QueryOptions{Region: c.cfg.Region, AuthToken: c.node.SecretID}}
	var resp structs.AllocsGetResponse
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if err := c.rpc.Call(ctx, "Alloc.GetAllocs", req, &resp); err != nil {
		return nil, err
	}
	return resp.Allocs, nil
}

// applyAllocs updates the runners of known allocs and starts runners for
// new ones. The new allocs of one pull are persisted in a single write
// (one fsync) before any of them starts: a burst of placements would
// otherwise wait in line for one fsync each before the client even
// acknowledged them.
func (c *Client) applyAllocs(allocs []*structs.Allocation) {
	var fresh []*structs.Allocation
	for _, a := range allocs {
		c.mu.Lock()
		ar, ok := c.runners[a.ID]
		c.mu.Unlock()
		switch {
		case ok:
			ar.Update(a)
		case a.ClientTerminalStatus():
			// Finished before this client knew it (e.g. a wiped data dir).
		default:
			fresh = append(fresh, a)
		}
	}
	if len(fresh) == 0 {
		return
	}
	if err := c.db.PutAllocs(fresh); err != nil {
		for _, a := range fresh {
			c.logger.Error("cannot run alloc", "alloc_id", a.ID, "error", err)
		}
		return
	}
	for _, a := range fresh {
		if err := c.addRunner(a, nil); err != nil {
			c.logger.Error("cannot run alloc", "alloc_id", a.ID, "error", err)
		}
	}
}

// removeAlloc destroys the runner of an alloc the servers forgot.
func (c *Client) removeAlloc(id string) {
	c.mu.Lock()
	ar, ok := c.runners[id]
	delete(c.runners, id)
	c.mu.Unlock()
	if ok {
		go ar.Destroy()
	}
}
