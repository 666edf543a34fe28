package structs

// Plan is a scheduler's proposed change to the cluster for one evaluation:
// allocations to place and to stop, per node.
type Plan struct {
	EvalID    string
	EvalToken string
	Priority  int
	AllAtOnce bool
	Job       *Job

	// NodeUpdate holds allocations to stop, keyed by node ID.
	NodeUpdate map[string][]*Allocation

	// NodeAllocation holds allocations to place or update in place,
	// keyed by node ID.
	NodeAllocation map[string][]*Allocation

	// SnapshotIndex is the state index the scheduler planned against.
	SnapshotIndex uint64

	// EvalUpdate, when set, is the evaluation's final state should the
	// whole plan commit: the applier then writes it in the plan's own
	// Raft entry and sets PlanResult.EvalUpdated, and the scheduler skips
	// its separate status write (one Raft entry per eval fewer). A plan
	// that commits only in part leaves the eval as it is.
	EvalUpdate *Evaluation
}

// AppendAlloc adds an allocation to place.
func (p *Plan) AppendAlloc(a *Allocation) {
	if p.NodeAllocation == nil {
		p.NodeAllocation = make(map[string][]*Allocation)
	}
	p.NodeAllocation[a.NodeID] = append(p.NodeAllocation[a.NodeID], a)
}

// AppendStoppedAlloc adds an allocation to stop with the given description
// and, when set, client status.
func (p *Plan) AppendStoppedAlloc(a *Allocation, desc, clientStatus string) {
	c := *a
	c.DesiredStatus = AllocDesiredStatusStop
	c.DesiredDescription = desc
	if clientStatus != "" {
		c.ClientStatus = clientStatus
	}
	if p.NodeUpdate == nil {
		p.NodeUpdate = make(map[string][]*Allocation)
	}
	p.NodeUpdate[a.NodeID] = append(p.NodeUpdate[a.NodeID], &c)
}

// IsNoOp reports whether the plan changes nothing.
func (p *Plan) IsNoOp() bool {
	return len(p.NodeUpdate) == 0 && len(p.NodeAllocation) == 0
}

// PlanResult is what the plan applier committed of a plan.
type PlanResult struct {
	NodeUpdate     map[string][]*Allocation
	NodeAllocation map[string][]*Allocation

	// RefreshIndex is set when only part of the plan was committed; the
	// scheduler must refresh its snapshot to at least this index.
	RefreshIndex uint64

	// AllocIndex is the Raft index of the commit.
	AllocIndex uint64

	// EvalUpdated reports that the plan's EvalUpdate was written with it.
	EvalUpdated bool
}

// FullCommit reports whether the whole plan was committed, and the counts
// of allocations expected and committed.
func (r *PlanResult) FullCommit(p *Plan) (bool, int, int) {
	expected, actual := 0, 0
	for node, allocs := range p.NodeAllocation {
		expected += len(allocs)
		actual += len(r.NodeAllocation[node])
	}
	return expected == actual, expected, actual
}
