package nomad

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadq/nomadq/state"
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
	inflight := &inflightPlans{}
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

// inflightPlans are the placements of plans answered before their Raft
// entry was applied. Only the applier goroutine uses it.
type inflightPlans struct {
	plans []*inflightPlan
	// waiting, when set (tests), is called as waitApplied starts.
	waiting func()
}

type inflightPlan struct {
	applied chan struct{} // closed once the entry is applied or failed
	byNode  map[string][]*structs.Allocation
}

// maxInflightPlans bounds the plans awaiting their entry: the applier
// waits for the oldest beyond it. Workers bound it already (each has at
// most two plans awaiting their entry), so this is only a safety net.
const maxInflightPlans = 64

// prune forgets the plans whose entry is applied: a snapshot taken after
// holds their placements.
func (f *inflightPlans) prune() {
	if len(f.plans) >= maxInflightPlans {
		<-f.plans[0].applied
	}
	kept := f.plans[:0]
	for _, p := range f.plans {
		select {
		case <-p.applied:
		default:
			kept = append(kept, p)
		}
	}
	clear(f.plans[len(kept):])
	f.plans = kept
}

// waitApplied waits until every plan in flight is applied (or failed).
func (f *inflightPlans) waitApplied() {
	if f.waiting != nil {
		f.waiting()
	}
	for _, p := range f.plans {
		<-p.applied
	}
	f.prune()
}

// add counts a plan's placements until applied is closed.
func (f *inflightPlans) add(byNode map[string][]*structs.Allocation, applied chan struct{}) {
	f.plans = append(f.plans, &inflightPlan{applied: applied, byNode: byNode})
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

// onNode returns the in-flight placements on a node.
func (f *inflightPlans) onNode(nodeID string) []*structs.Allocation {
	if f == nil {
		return nil
	}
	var out []*structs.Allocation
	for _, p := range f.plans {
		out = append(out, p.byNode[nodeID]...)
	}
	return out
}

// applyPlan checks a plan and sends what fits to Raft. A full commit is
// returned with the future of its entry, still being applied; a partial
// one after its entry is applied, with a nil future.
func (s *Server) applyPlan(plan *structs.Plan, inflight *inflightPlans) (*structs.PlanResult, raft.ApplyFuture, error) {
	defer s.metrics().MeasureSince([]string{"nomad", "plan", "apply"}, time.Now())
	if plan.EvalToken != "" {
		token, ok := s.evalBroker.Outstanding(plan.EvalID)
		if !ok || token != plan.EvalToken {
			return nil, nil, fmt.Errorf("plan for eval %s rejected: evaluation token does not match", plan.EvalID)
		}
	}
	// Forget the plans applied by now before the snapshot that holds
	// them.
	inflight.prune()
	snap, err := s.State().Snapshot()
	if err != nil {
		return nil, nil, err
	}
	evalStart := time.Now()
	result, err := evaluatePlan(snap, plan, inflight, s.logger)
	s.metrics().MeasureSince([]string{"nomad", "plan", "evaluate"}, evalStart)
	if err != nil {
		return nil, nil, err
	}
	if len(result.NodeAllocation) == 0 && len(result.NodeUpdate) == 0 {
		if result.RefreshIndex != 0 && len(inflight.plans) > 0 {
			// Rejected because of plans in flight: the scheduler
			// refreshes to this index and tries again, so it must see
			// them, or it picks the same node until its attempts run out.
			inflight.waitApplied()
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
	var placements []placement
	for _, allocs := range result.NodeAllocation {
		for _, a := range allocs {
			existing, err := snap.AllocByID(nil, a.ID)
			if err != nil {
				return nil, nil, err
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
		inflight.add(result.NodeAllocation, shared.done)
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

// evaluatePlan keeps the part of the plan that still fits: a node's
// placements are kept only when the node is ready and the node's live
// allocations, less those the plan stops or replaces, plus the placements
// fit its capacity. Stops always apply. When a node's part is dropped the
// result asks the scheduler to refresh and retry.
// The placements of plans still in flight (nil for none) count against
// their nodes as if applied.
func evaluatePlan(snap *state.StateSnapshot, plan *structs.Plan, inflight *inflightPlans, logger hclog.Logger) (*structs.PlanResult, error) {
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
