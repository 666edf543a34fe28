package scheduler

import (
	"regexp"

	"github.com/nomadq/nomadq/structs"
)

// evalContext is what the iterators of one scheduling attempt share: the
// state snapshot, the plan being built, resource usage per node as the
// plan changes it, and the placement metric being recorded.
type evalContext struct {
	state State
	plan  *structs.Plan
	jobID string

	// metric is the metric of the placement being selected.
	metric *structs.AllocMetric

	regexps  map[string]*regexp.Regexp
	versions map[string]*versionConstraint

	usage map[string]*nodeUsage
	// byNode is usage keyed by node pointer: the hot path of ranking
	// looks up a node's usage for every candidate, and hashing a pointer
	// is much cheaper than hashing an ID.
	byNode  map[*structs.Node]*nodeUsage
	stopped map[string]bool // IDs of allocations the plan stops

	// live holds the job's allocations that will run once the plan
	// commits: existing ones not stopped, then placements in order. The
	// distinct_* and spread iterators read it incrementally.
	live []liveAlloc
	// onNode counts live allocations of the job per node, and per node
	// and group.
	onNode      map[string]int
	onNodeGroup map[nodeGroup]int

	nodes map[string]*structs.Node
	err   error
}

type nodeGroup struct{ node, group string }

type liveAlloc struct {
	nodeID string
	group  string
}

// nodeUsage is a node's reservable capacity and what is reserved on it.
type nodeUsage struct {
	capacity structs.ComparableResources
	used     structs.ComparableResources
}

func newEvalContext(state State, plan *structs.Plan, jobID string, nodes map[string]*structs.Node) *evalContext {
	return &evalContext{
		state:       state,
		plan:        plan,
		jobID:       jobID,
		regexps:     make(map[string]*regexp.Regexp),
		versions:    make(map[string]*versionConstraint),
		usage:       make(map[string]*nodeUsage),
		byNode:      make(map[*structs.Node]*nodeUsage),
		stopped:     make(map[string]bool),
		onNode:      make(map[string]int),
		onNodeGroup: make(map[nodeGroup]int),
		nodes:       nodes,
	}
}

func (ctx *evalContext) regexp(s string) *regexp.Regexp {
	re, ok := ctx.regexps[s]
	if !ok {
		re = compileRegexp(s)
		ctx.regexps[s] = re
	}
	return re
}

func (ctx *evalContext) versionConstraint(s string, semver bool) *versionConstraint {
	key := s
	if semver {
		key = "semver:" + s
	}
	vc, ok := ctx.versions[key]
	if !ok {
		vc = parseVersionConstraint(s, semver)
		ctx.versions[key] = vc
	}
	return vc
}

// usageOf returns the node's usage, loading it from state the first time:
// non-terminal allocations, less those the plan stops.
func (ctx *evalContext) usageOf(n *structs.Node) *nodeUsage {
	if u, ok := ctx.byNode[n]; ok {
		return u
	}
	if u, ok := ctx.usage[n.ID]; ok {
		ctx.byNode[n] = u
		return u
	}
	u := &nodeUsage{capacity: n.Comparable()}
	allocs, err := ctx.state.AllocsByNode(n.ID)
	if err != nil && ctx.err == nil {
		ctx.err = err
	}
	for _, a := range allocs {
		if a.TerminalStatus() || ctx.stopped[a.ID] {
			continue
		}
		u.used.Add(allocUsage(a))
	}
	ctx.usage[n.ID] = u
	ctx.byNode[n] = u
	return u
}

// addLive records an allocation of the job that runs after the plan.
func (ctx *evalContext) addLive(nodeID, group string) {
	ctx.live = append(ctx.live, liveAlloc{nodeID, group})
	ctx.onNode[nodeID]++
	ctx.onNodeGroup[nodeGroup{nodeID, group}]++
}

// stop records that the plan stops an allocation.
func (ctx *evalContext) stop(a *structs.Allocation) {
	if ctx.stopped[a.ID] {
		return
	}
	ctx.stopped[a.ID] = true
	if a.TerminalStatus() {
		return
	}
	if u, ok := ctx.usage[a.NodeID]; ok {
		sub(&u.used, allocUsage(a))
	}
}

// place records a new allocation the plan places on a node.
func (ctx *evalContext) place(n *structs.Node, group string, ask structs.ComparableResources) {
	ctx.usageOf(n).used.Add(ask)
	ctx.addLive(n.ID, group)
}

// node returns a node by ID, from the attempt's node list or state.
func (ctx *evalContext) node(id string) *structs.Node {
	if n, ok := ctx.nodes[id]; ok {
		return n
	}
	n, err := ctx.state.NodeByID(id)
	if err != nil && ctx.err == nil {
		ctx.err = err
	}
	ctx.nodes[id] = n
	return n
}
