package nomad

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// planApply is the leader's single plan applier: it takes plans in
// priority order, checks each node's part against the latest state, and
// commits what fits through Raft. One applier means two plans can never
// both take the same free capacity.
func (s *Server) planApply(ctx context.Context) {
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
		result, err := s.applyPlan(pending.Plan)
		pending.Respond(result, err)
	}
}

func (s *Server) applyPlan(plan *structs.Plan) (*structs.PlanResult, error) {
	defer s.metrics().MeasureSince([]string{"nomad", "plan", "apply"}, time.Now())
	if plan.EvalToken != "" {
		token, ok := s.evalBroker.Outstanding(plan.EvalID)
		if !ok || token != plan.EvalToken {
			return nil, fmt.Errorf("plan for eval %s rejected: evaluation token does not match", plan.EvalID)
		}
	}
	snap, err := s.State().Snapshot()
	if err != nil {
		return nil, err
	}
	evalStart := time.Now()
	result, err := evaluatePlan(snap, plan, s.logger)
	s.metrics().MeasureSince([]string{"nomad", "plan", "evaluate"}, evalStart)
	if err != nil {
		return nil, err
	}
	if len(result.NodeAllocation) == 0 && len(result.NodeUpdate) == 0 {
		return result, nil
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
	var placements []placement
	for _, allocs := range result.NodeAllocation {
		for _, a := range allocs {
			existing, err := snap.AllocByID(nil, a.ID)
			if err != nil {
				return nil, err
			}
			c := strip(a)
			placements = append(placements, placement{planned: a, write: c, existing: existing})
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
	if err := s.signIdentities(snap, plan, placements); err != nil {
		return nil, err
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
	_, index, err := s.raftApply(structs.ApplyPlanResultsRequestType, req)
	if err != nil {
		return nil, err
	}
	result.EvalUpdated = evalUpdated
	result.AllocIndex = index
	if result.RefreshIndex != 0 {
		result.RefreshIndex = index
	}
	return result, nil
}

// evaluatePlan keeps the part of the plan that still fits: a node's
// placements are kept only when the node is ready and the node's live
// allocations, less those the plan stops or replaces, plus the placements
// fit its capacity. Stops always apply. When a node's part is dropped the
// result asks the scheduler to refresh and retry.
func evaluatePlan(snap *state.StateSnapshot, plan *structs.Plan, logger hclog.Logger) (*structs.PlanResult, error) {
	result := &structs.PlanResult{
		NodeUpdate:     plan.NodeUpdate,
		NodeAllocation: make(map[string][]*structs.Allocation, len(plan.NodeAllocation)),
	}
	partial := false
	for nodeID, placed := range plan.NodeAllocation {
		ok, reason, err := nodeFits(snap, plan, nodeID, placed)
		if err != nil {
			return nil, err
		}
		if !ok {
			partial = true
			logger.Debug("plan rejected for node", "eval_id", plan.EvalID, "node_id", nodeID, "reason", reason)
			if plan.AllAtOnce {
				result.NodeAllocation = nil
				result.NodeUpdate = nil
				break
			}
			continue
		}
		result.NodeAllocation[nodeID] = placed
	}
	if partial {
		latest, err := snap.LatestIndex()
		if err != nil {
			return nil, err
		}
		result.RefreshIndex = max(latest, 1)
	}
	return result, nil
}

var errNodeMissing = errors.New("node does not exist")

func nodeFits(snap *state.StateSnapshot, plan *structs.Plan, nodeID string, placed []*structs.Allocation) (bool, string, error) {
	node, err := snap.NodeByID(nil, nodeID)
	if err != nil {
		return false, "", err
	}
	if node == nil {
		return false, errNodeMissing.Error(), nil
	}
	if node.Status != structs.NodeStatusReady {
		return false, "node is " + node.Status, nil
	}
	existing, err := snap.AllocsByNodeTerminal(nil, nodeID, false)
	if err != nil {
		return false, "", err
	}
	skip := make(map[string]bool)
	for _, a := range plan.NodeUpdate[nodeID] {
		skip[a.ID] = true
	}
	newPlacement := false
	for _, a := range placed {
		skip[a.ID] = true // an in-place update replaces its stored self
	}
	var used structs.ComparableResources
	var holders []*structs.Allocation
	for _, a := range existing {
		if skip[a.ID] || a.TerminalStatus() {
			continue
		}
		used.Add(a.AllocatedResources.Comparable())
		holders = append(holders, a)
	}
	stored := make(map[string]bool, len(existing))
	for _, a := range existing {
		stored[a.ID] = true
	}
	for _, a := range placed {
		if !stored[a.ID] {
			newPlacement = true
		}
		if a.ClientTerminalStatus() {
			continue // an update of a finished alloc holds nothing
		}
		used.Add(a.AllocatedResources.Comparable())
		holders = append(holders, a)
	}
	if newPlacement && node.SchedulingEligibility != structs.NodeSchedulingEligible {
		return false, "node is ineligible", nil
	}
	if ok, dim := node.Comparable().Superset(used); !ok {
		return false, dim + " exhausted", nil
	}
	// Two plans evaluated against the same snapshot may each pick a
	// free port or core; only the first to commit gets it.
	if c := structs.HostClaimCollision(node.ReservedHostPorts(), holders); c != "" {
		return false, c, nil
	}
	return true, "", nil
}
