package nomad

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/nomad/planfit"
	"github.com/nomadq/nomadq/structs"
)

// planApply is the leader's single plan applier: it takes plans in
// priority order, checks each node's part against the latest state, and
// commits what fits through Raft. One applier means two plans can never
// both take the same free capacity.
//
// A plan that fits in full is answered as soon as its Raft entry is on
// its way, with the entry's future (PlanResult via planqueue.Pending.Commit):
// the worker goes on to its next eval and acks this one only once the
// entry is applied, as it does for its eval status writes. Until then the
// applier counts the plan's placements against their nodes (inflight), so
// the next plans cannot take the same capacity. A plan that fits only in
// part is answered once applied, with the index to refresh to.
func (s *Server) planApply(ctx context.Context) {
	inflight := &planfit.Inflight{}
	for ctx.Err() == nil {
		pending, err := s.planQueue.Dequeue(500 * time.Millisecond)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if pending == nil {
			continue
		}
		result, commit, err := s.applyPlan(pending.Plan, inflight)
		pending.RespondCommit(result, commit, err)
	}
}

// sharedApply lets several goroutines wait for one Raft entry (the plan
// applier's in-flight count and the worker), where raft's futures allow
// one waiter.
type sharedApply struct {
	done  chan struct{}
	err   error
	resp  any
	index uint64
}

func newSharedApply(f raft.ApplyFuture) *sharedApply {
	s := &sharedApply{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if s.err = f.Error(); s.err == nil {
			s.resp, s.index = f.Response(), f.Index()
		}
	}()
	return s
}

func (s *sharedApply) Error() error  { <-s.done; return s.err }
func (s *sharedApply) Response() any { <-s.done; return s.resp }
func (s *sharedApply) Index() uint64 { <-s.done; return s.index }

// applyPlan checks a plan and sends what fits to Raft. A full commit is
// returned with the future of its entry, still being applied; a partial
// one after its entry is applied, with a nil future.
func (s *Server) applyPlan(plan *structs.Plan, inflight *planfit.Inflight) (*structs.PlanResult, raft.ApplyFuture, error) {
	defer s.metrics().MeasureSince([]string{"nomad", "plan", "apply"}, time.Now())
	if plan.EvalToken != "" {
		token, ok := s.evalBroker.Outstanding(plan.EvalID)
		if !ok || token != plan.EvalToken {
			return nil, nil, fmt.Errorf("plan for eval %s rejected: evaluation token does not match", plan.EvalID)
		}
	}
	// Forget the plans applied by now before the snapshot that holds
	// them.
	inflight.Prune()
	snap, err := s.State().Snapshot()
	if err != nil {
		return nil, nil, err
	}
	evalStart := time.Now()
	result, err := planfit.Evaluate(snap, plan, inflight, s.logger)
	s.metrics().MeasureSince([]string{"nomad", "plan", "evaluate"}, evalStart)
	if err != nil {
		return nil, nil, err
	}
	if len(result.NodeAllocation) == 0 && len(result.NodeUpdate) == 0 {
		if result.RefreshIndex != 0 && inflight.Len() > 0 {
			// Rejected because of plans in flight: the scheduler
			// refreshes to this index and tries again, so it must see
			// them, or it picks the same node until its attempts run out.
			inflight.WaitApplied()
			latest, err := s.State().LatestIndex()
			if err != nil {
				return nil, nil, err
			}
			result.RefreshIndex = max(result.RefreshIndex, latest)
		}
		return result, nil, nil
	}

	now := time.Now().UnixNano()
	req := &structs.ApplyPlanResultsRequest{Job: plan.Job, EvalID: plan.EvalID}
	// The allocs travel without their job: the entry carries the plan's
	// job once and the FSM links it back, so an entry's size grows with
	// the number of allocs, not allocs times the job's size.
	strip := func(a *structs.Allocation) *structs.Allocation {
		c := *a
		c.ModifyTime = now
		if plan.Job != nil {
			c.Job = nil
		}
		return &c
	}
	for _, allocs := range result.NodeUpdate {
		for _, a := range allocs {
			// A stop is merged onto the stored alloc; its job is not needed.
			c := strip(a)
			c.Job = nil
			req.AllocsStopped = append(req.AllocsStopped, c)
		}
	}
	var placements []keyring.Placement
	for _, allocs := range result.NodeAllocation {
		for _, a := range allocs {
			existing, err := snap.AllocByID(nil, a.ID)
			if err != nil {
				return nil, nil, err
			}
			c := strip(a)
			placements = append(placements, keyring.Placement{Planned: a, Write: c, Existing: existing})
			if existing == nil {
				// CreateTime is stamped here, once: max_run_duration
				// deadlines are anchored to it.
				c.CreateTime = now
			} else {
				c.CreateTime = existing.CreateTime
			}
			a.CreateTime = c.CreateTime
			req.AllocsUpdated = append(req.AllocsUpdated, c)
		}
	}
	if err := s.keyring.SignPlacements(snap, plan, placements); err != nil {
		return nil, nil, err
	}
	// The scheduler's verdict on its eval, for a plan that commits in
	// full, goes in the same entry (see structs.Plan.EvalUpdate).
	var evalUpdated bool
	if e := plan.EvalUpdate; e != nil && e.ID == plan.EvalID {
		if full, _, _ := result.FullCommit(plan); full {
			c := e.Copy()
			c.ModifyTime = now
			req.Evals = append(req.Evals, c)
			evalUpdated = true
		}
	}
	if result.RefreshIndex == 0 {
		future, err := s.raftApplyAsync(structs.ApplyPlanResultsRequestType, req)
		if err != nil {
			return nil, nil, err
		}
		shared := newSharedApply(future)
		inflight.Add(result.NodeAllocation, shared.done)
		result.EvalUpdated = evalUpdated
		return result, shared, nil
	}
	_, index, err := s.raftApply(structs.ApplyPlanResultsRequestType, req)
	if err != nil {
		return nil, nil, err
	}
	result.EvalUpdated = evalUpdated
	result.AllocIndex = index
	result.RefreshIndex = index
	return result, nil, nil
}
