package client

import (
	"context"
	"errors"
	"fmt"
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
//
// A new alloc never stays pending without a runner: one that cannot be
// run (no job, no such group, a runner that cannot be built) or that
// cannot be persisted after persistAttempts tries is reported failed,
// with the reason in its description, as Nomad's client reports an
// invalid alloc.
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
	if err := c.persistAllocs(fresh); err != nil {
		if c.ctx.Err() != nil {
			return
		}
		for _, a := range fresh {
			c.failAlloc(a, err)
		}
		return
	}
	for _, a := range fresh {
		if err := c.addRunner(a, nil); err != nil {
			if errors.Is(err, errClientClosed) || c.ctx.Err() != nil {
				return
			}
			// Not to be restored by the next client either.
			if derr := c.db.DeleteAlloc(a.ID); derr != nil {
				c.logger.Warn("cannot forget failed alloc", "alloc_id", a.ID, "error", derr)
			}
			c.failAlloc(a, err)
		}
	}
}

// persistAttempts bounds the tries of one alloc write; persistBackoff is
// the wait after the first failed try, doubled after each next one.
const (
	persistAttempts = 5
	persistBackoff  = 100 * time.Millisecond
)

// persistAllocs writes new allocs to the state DB, retrying a failed
// write with backoff: a write can fail for a moment (a full disk that
// is being cleaned, a slow fsync) and an alloc failed for that is a
// reschedule the job did not need.
func (c *Client) persistAllocs(allocs []*structs.Allocation) error {
	wait := persistBackoff
	var err error
	for attempt := 1; ; attempt++ {
		if err = c.db.PutAllocs(allocs); err == nil {
			return nil
		}
		if attempt == persistAttempts {
			break
		}
		c.logger.Warn("cannot persist allocs; will retry", "allocs", len(allocs), "attempt", attempt, "retry_in", wait, "error", err)
		if !c.sleep(wait) {
			return err
		}
		wait *= 2
	}
	return fmt.Errorf("persist alloc in client state after %d attempts: %w", persistAttempts, err)
}

// failAlloc reports an alloc this client cannot run as failed, so that
// it does not stay pending for ever and its job can reschedule it. Its
// tasks, if it names any, are dead and failed.
func (c *Client) failAlloc(a *structs.Allocation, cause error) {
	c.logger.Error("cannot run alloc; marking it failed", "alloc_id", a.ID, "error", cause)
	now := time.Now()
	states := make(map[string]*structs.TaskState)
	if a.Job != nil {
		if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				states[t.Name] = &structs.TaskState{State: structs.TaskStateDead, Failed: true, FinishedAt: now}
			}
		}
	}
	c.sync.update(&structs.Allocation{
		ID:                a.ID,
		NodeID:            a.NodeID,
		Namespace:         a.Namespace,
		JobID:             a.JobID,
		TaskGroup:         a.TaskGroup,
		ClientStatus:      structs.AllocClientStatusFailed,
		ClientDescription: "Unable to add allocation due to error: " + cause.Error(),
		TaskStates:        states,
		NetworkStatus:     &structs.AllocNetworkStatus{},
	})
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
