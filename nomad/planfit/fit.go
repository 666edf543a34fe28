package planfit

import (
	"errors"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Evaluate keeps the part of the plan that still fits: a node's
// placements are kept only when the node is ready and the node's live
// allocations, less those the plan stops or replaces, plus the placements
// fit its capacity. Stops always apply. When a node's part is dropped the
// result asks the scheduler to refresh and retry.
// The placements of plans still in flight (nil for none) count against
// their nodes as if applied.
func Evaluate(snap *state.StateSnapshot, plan *structs.Plan, inflight *Inflight, logger hclog.Logger) (*structs.PlanResult, error) {
	result := &structs.PlanResult{
		NodeUpdate:     plan.NodeUpdate,
		NodeAllocation: make(map[string][]*structs.Allocation, len(plan.NodeAllocation)),
	}
	partial := false
	for nodeID, placed := range plan.NodeAllocation {
		ok, reason, err := nodeFits(snap, plan, nodeID, placed, inflight.onNode(nodeID))
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

// nodeFits reports whether a node takes the plan's placements on it, on
// top of its live allocs and the placements in flight (pending), and
// why not.
func nodeFits(snap *state.StateSnapshot, plan *structs.Plan, nodeID string, placed, pending []*structs.Allocation) (bool, string, error) {
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
	// A placement of a plan in flight stands in for its stored version,
	// if any; its stops are not counted until applied.
	var newer map[string]*structs.Allocation
	if len(pending) > 0 {
		newer = make(map[string]*structs.Allocation, len(pending))
		for _, a := range pending {
			newer[a.ID] = a
		}
	}
	var used structs.ComparableResources
	var holders []*structs.Allocation
	hold := func(a *structs.Allocation) {
		if skip[a.ID] || a.TerminalStatus() {
			return
		}
		used.Add(a.AllocatedResources.Comparable())
		holders = append(holders, a)
	}
	for _, a := range existing {
		if n, ok := newer[a.ID]; ok {
			a = n
			delete(newer, a.ID)
		}
		hold(a)
	}
	for _, a := range pending {
		if newer[a.ID] == a {
			hold(a)
		}
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
