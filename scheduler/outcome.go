package scheduler

import (
	"fmt"
	"maps"
	"time"

	"github.com/nomadq/nomadq/structs"
)

const (
	descMaxAttempts     = "maximum plan attempts reached"
	descBlockedConflict = "created due to placement conflicts"
)

// outcome is what every scheduler records about an evaluation once it
// stops planning: the placements that failed, a blocked eval to retry
// them, and the evaluation's final status.
type outcome struct {
	planner     Planner
	now         func() time.Time
	maxAttempts int

	eval *structs.Evaluation
	job  *structs.Job

	blocked       *structs.Evaluation
	statusWritten bool // the final plan wrote the eval's verdict
	failed        map[string]*structs.AllocMetric
	queued        map[string]int
	classElig     map[string]bool
	escaped       bool
	snapshotIndex uint64
}

// newEval returns an evaluation of the same job, linked to this one.
func (o *outcome) newEval(trigger, status string, now time.Time) *structs.Evaluation {
	e := &structs.Evaluation{
		ID:           structs.GenerateUUID(),
		Namespace:    o.eval.Namespace,
		Priority:     o.eval.Priority,
		Type:         o.eval.Type,
		TriggeredBy:  trigger,
		JobID:        o.eval.JobID,
		Status:       status,
		PreviousEval: o.eval.ID,
		CreateTime:   now.UnixNano(),
		ModifyTime:   now.UnixNano(),
	}
	if o.job != nil {
		e.JobModifyIndex = o.job.JobModifyIndex
	}
	return e
}

// blockedEval returns the eval that waits for capacity or feasibility to
// change, carrying what the blocked-evals tracker needs to unblock it.
func (o *outcome) blockedEval(trigger string, now time.Time) *structs.Evaluation {
	e := o.newEval(trigger, structs.EvalStatusBlocked, now)
	e.ClassEligibility = o.classElig
	e.EscapedComputedClass = o.escaped
	e.FailedTGAllocs = copyMetrics(o.failed)
	e.QueuedAllocations = maps.Clone(o.queued)
	e.SnapshotIndex = o.snapshotIndex
	return e
}

// finish records the outcome: complete, or blocked again when this was
// a blocked evaluation that still cannot place everything.
func (o *outcome) finish() error {
	if o.statusWritten {
		return nil
	}
	now := o.now()
	if len(o.failed) > 0 {
		if o.eval.Status == structs.EvalStatusBlocked {
			e := o.eval.Copy()
			e.FailedTGAllocs = o.failed
			e.QueuedAllocations = o.queued
			e.ClassEligibility = o.classElig
			e.EscapedComputedClass = o.escaped
			e.SnapshotIndex = o.snapshotIndex
			e.ModifyTime = now.UnixNano()
			if err := o.planner.ReblockEval(e); err != nil {
				return fmt.Errorf("reblock evaluation %s: %w", o.eval.ID, err)
			}
			return nil
		}
		o.blocked = o.blockedEval(structs.EvalTriggerQueuedAllocs, now)
		if err := o.planner.CreateEval(o.blocked); err != nil {
			return fmt.Errorf("create blocked evaluation: %w", err)
		}
	}
	return o.setStatus(structs.EvalStatusComplete, "", now)
}

// maxAttemptsReached fails the evaluation and leaves a blocked one that
// the server retries periodically.
func (o *outcome) maxAttemptsReached() error {
	now := o.now()
	o.blocked = o.blockedEval(structs.EvalTriggerMaxPlans, now)
	o.blocked.StatusDescription = descBlockedConflict
	if err := o.planner.CreateEval(o.blocked); err != nil {
		return fmt.Errorf("create blocked evaluation: %w", err)
	}
	return o.setStatus(structs.EvalStatusFailed, fmt.Sprintf("%s (%d)", descMaxAttempts, o.maxAttempts), now)
}

func (o *outcome) setStatus(status, desc string, now time.Time) error {
	if err := o.planner.UpdateEval(o.statusEval(status, desc, now)); err != nil {
		return fmt.Errorf("update evaluation %s: %w", o.eval.ID, err)
	}
	return nil
}

// statusEval is the eval with its final status and what this run of
// the scheduler found.
func (o *outcome) statusEval(status, desc string, now time.Time) *structs.Evaluation {
	e := o.eval.Copy()
	e.Status = status
	e.StatusDescription = desc
	e.FailedTGAllocs = o.failed
	e.QueuedAllocations = o.queued
	e.SnapshotIndex = o.snapshotIndex
	e.ModifyTime = now.UnixNano()
	if o.blocked != nil {
		e.BlockedEval = o.blocked.ID
	}
	return e
}

// recordFailure notes a placement of a group that found no node.
func (o *outcome) recordFailure(group string, m *structs.AllocMetric) {
	if o.failed == nil {
		o.failed = make(map[string]*structs.AllocMetric)
	}
	o.failed[group] = m
}

// resetCounts starts a new plan attempt's bookkeeping.
func (o *outcome) resetCounts(job *structs.Job) {
	o.failed = nil
	o.queued = make(map[string]int)
	if job != nil {
		for _, tg := range job.TaskGroups {
			o.queued[tg.Name] = 0
		}
	}
}

// submit hands a plan to the planner; done is false when it was only
// partly committed and the scheduler must plan again against the state
// it returns.
//
// When every placement of this attempt found a node, a full commit
// completes the eval with nothing more to record, so the plan carries
// that verdict (Plan.EvalUpdate) for the applier to write in the same
// Raft entry; finish then has nothing left to write. Attempts with
// failed placements leave a blocked eval to create first, and write
// their verdict as before.
func (o *outcome) submit(plan *structs.Plan) (done, progress bool, state State, err error) {
	if len(o.failed) == 0 {
		e := o.statusEval(structs.EvalStatusComplete, "", o.now())
		e.QueuedAllocations = maps.Clone(o.queued)
		plan.EvalUpdate = e
	}
	result, newState, err := o.planner.SubmitPlan(plan)
	if err != nil {
		return false, false, nil, fmt.Errorf("submit plan: %w", err)
	}
	if result == nil {
		return false, false, newState, nil
	}
	full, _, actual := result.FullCommit(plan)
	progress = actual > 0 || len(result.NodeUpdate) > 0
	o.statusWritten = result.EvalUpdated // set only for a full commit of a plan with EvalUpdate
	return full, progress, newState, nil
}

// run plans until an attempt commits fully, then records the outcome. An
// attempt that commits something resets the count; maxAttempts attempts
// in a row without progress fail the evaluation.
func (o *outcome) run(attempt func() (done, progress bool, err error)) error {
	attempts := 0
	for {
		done, progress, err := attempt()
		if err != nil {
			return fmt.Errorf("evaluation %s of job %q: %w", o.eval.ID, o.eval.JobID, err)
		}
		if done {
			return o.finish()
		}
		if progress {
			attempts = 0
		} else {
			attempts++
		}
		if attempts >= o.maxAttempts {
			return o.maxAttemptsReached()
		}
	}
}

// snapshot is what one plan attempt reads from state.
type snapshot struct {
	job      *structs.Job
	allocs   []*structs.Allocation
	nodes    []*structs.Node
	nodeByID map[string]*structs.Node
	// ready counts the ready nodes by pool and datacenter.
	ready     map[string]map[string]int
	algorithm string
	// nodeLimit is how many nodes a placement with preferences scores.
	nodeLimit int
	index     uint64
}

// readSnapshot reads the evaluation's job, its allocations, the nodes and
// the placement algorithm.
func readSnapshot(state State, eval *structs.Evaluation) (*snapshot, error) {
	var snap snapshot
	var err error
	if snap.job, err = state.JobByID(eval.Namespace, eval.JobID); err != nil {
		return nil, fmt.Errorf("read job: %w", err)
	}
	if snap.allocs, err = state.AllocsByJob(eval.Namespace, eval.JobID); err != nil {
		return nil, fmt.Errorf("read allocations: %w", err)
	}
	if ns, ok := state.(NodeSetState); ok {
		// Shared with other evaluations: never modified here.
		if snap.nodes, snap.nodeByID, err = ns.NodeSet(); err != nil {
			return nil, fmt.Errorf("read nodes: %w", err)
		}
	} else if snap.nodes, err = state.Nodes(); err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	if rc, ok := state.(ReadyCountState); ok {
		// Shared too.
		if snap.ready, err = rc.ReadyNodeCounts(); err != nil {
			return nil, fmt.Errorf("count ready nodes: %w", err)
		}
	} else {
		snap.ready = structs.CountReadyNodes(snap.nodes)
	}
	if snap.algorithm, snap.nodeLimit, err = schedulerSettings(state); err != nil {
		return nil, err
	}
	if snap.index, err = state.LatestIndex(); err != nil {
		return nil, fmt.Errorf("read index: %w", err)
	}
	if snap.nodeByID == nil {
		snap.nodeByID = make(map[string]*structs.Node, len(snap.nodes))
		for _, n := range snap.nodes {
			snap.nodeByID[n.ID] = n
		}
	}
	return &snap, nil
}

// newPlan starts the plan of one attempt.
func (o *outcome) newPlan(snap *snapshot) *structs.Plan {
	p := &structs.Plan{EvalID: o.eval.ID, Priority: o.eval.Priority, Job: snap.job, SnapshotIndex: snap.index}
	if snap.job != nil {
		p.AllAtOnce = snap.job.AllAtOnce
	}
	return p
}
