package scheduler

import (
	"regexp"

	"github.com/hashicorp/go-version"

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

	// nodeLimit caps the nodes a placement with affinities or spreads
	// scores (the scheduler configuration's
	// NodeLimitForFeasibilityChecks); zero means scoredWithPreferences.
	nodeLimit int

	regexps map[string]*regexp.Regexp
	// versionCons and semverCons hold parsed constraint values (nil when
	// the value does not parse) and versions parsed node attribute values
	// (nil when not a version): parsing is a regular expression match, and
	// an attempt checks the same few values against every node.
	versionCons map[string]structs.VersionConstraint
	semverCons  map[string]structs.VersionConstraint
	versions    map[string]*version.Version

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

	// nodes is the attempt's node list by ID, shared with other
	// evaluations and never written; looked-up, the nodes missing from it
	// (read from state) are kept in more.
	nodes map[string]*structs.Node
	more  map[string]*structs.Node
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
	// ports counts the holders of each host port (the node's reserved
	// ports count as one); cores does the same for reserved cores.
	ports map[int]int
	cores map[uint16]int
}

// hold adds (delta 1) or removes (delta -1) an allocation's ports and
// cores.
func (u *nodeUsage) hold(ports []int, cores []uint16, delta int) {
	for _, p := range ports {
		u.ports[p] += delta
		if u.ports[p] <= 0 {
			delete(u.ports, p)
		}
	}
	for _, c := range cores {
		u.cores[c] += delta
		if u.cores[c] <= 0 {
			delete(u.cores, c)
		}
	}
}

func newEvalContext(state State, plan *structs.Plan, jobID string, nodes map[string]*structs.Node) *evalContext {
	return &evalContext{
		state:       state,
		plan:        plan,
		jobID:       jobID,
		regexps:     make(map[string]*regexp.Regexp),
		versionCons: make(map[string]structs.VersionConstraint),
		semverCons:  make(map[string]structs.VersionConstraint),
		versions:    make(map[string]*version.Version),
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

// versionConstraint returns the parsed value of a version (semver unset)
// or semver constraint, or nil when it does not parse.
func (ctx *evalContext) versionConstraint(s string, semver bool) structs.VersionConstraint {
	cache := ctx.versionCons
	if semver {
		cache = ctx.semverCons
	}
	c, ok := cache[s]
	if !ok {
		c, _ = structs.ParseVersionConstraint(s, semver)
		cache[s] = c
	}
	return c
}

// version returns s parsed as a version, or nil when it is not one. Both
// constraint flavours read the node's side leniently, as Nomad does.
func (ctx *evalContext) version(s string) *version.Version {
	v, ok := ctx.versions[s]
	if !ok {
		var err error
		if v, err = version.NewVersion(s); err != nil {
			v = nil
		}
		ctx.versions[s] = v
	}
	return v
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
	u := &nodeUsage{capacity: n.Comparable(), ports: make(map[int]int), cores: make(map[uint16]int)}
	u.hold(n.ReservedHostPorts(), nil, 1)
	allocs, err := ctx.state.AllocsByNode(n.ID)
	if err != nil && ctx.err == nil {
		ctx.err = err
	}
	for _, a := range allocs {
		if a.TerminalStatus() || ctx.stopped[a.ID] {
			continue
		}
		u.used.Add(allocUsage(a))
		u.hold(portValues(a), a.ReservedCores(), 1)
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
		u.hold(portValues(a), a.ReservedCores(), -1)
	}
}

// place records a new allocation the plan places on a node: its ask and
// the ports and cores its offer took.
func (ctx *evalContext) place(n *structs.Node, group string, ask structs.ComparableResources, o *offer) {
	u := ctx.usageOf(n)
	if o != nil {
		ask = o.ask
		var ports []int
		for _, p := range o.ports {
			ports = append(ports, p.Value)
		}
		var cores []uint16
		for _, cs := range o.cores {
			cores = append(cores, cs...)
		}
		u.hold(ports, cores, 1)
	}
	u.used.Add(ask)
	ctx.addLive(n.ID, group)
}

// node returns a node by ID, from the attempt's node list or state.
func (ctx *evalContext) node(id string) *structs.Node {
	if n, ok := ctx.nodes[id]; ok {
		return n
	}
	if n, ok := ctx.more[id]; ok {
		return n
	}
	n, err := ctx.state.NodeByID(id)
	if err != nil && ctx.err == nil {
		ctx.err = err
	}
	if ctx.more == nil {
		ctx.more = make(map[string]*structs.Node)
	}
	ctx.more[id] = n
	return n
}
