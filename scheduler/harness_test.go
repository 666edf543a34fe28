package scheduler

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// memState is an in-memory State.
type memState struct {
	index  uint64
	nodes  []*structs.Node
	jobs   map[structs.NamespacedID]*structs.Job
	allocs map[string]*structs.Allocation
	order  []string // alloc IDs in insertion order
	byNode map[string][]string
	evals  map[string]*structs.Evaluation
	config *structs.SchedulerConfiguration
}

func newMemState() *memState {
	return &memState{
		index:  1,
		jobs:   make(map[structs.NamespacedID]*structs.Job),
		allocs: make(map[string]*structs.Allocation),
		byNode: make(map[string][]string),
		evals:  make(map[string]*structs.Evaluation),
		config: structs.DefaultSchedulerConfiguration(),
	}
}

func (s *memState) JobByID(ns, id string) (*structs.Job, error) {
	return s.jobs[structs.NamespacedID{Namespace: ns, ID: id}], nil
}

func (s *memState) NodeByID(id string) (*structs.Node, error) {
	for _, n := range s.nodes {
		if n.ID == id {
			return n, nil
		}
	}
	return nil, nil
}

func (s *memState) Nodes() ([]*structs.Node, error) { return s.nodes, nil }

func (s *memState) AllocsByJob(ns, jobID string) ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	for _, id := range s.order {
		a := s.allocs[id]
		if a.Namespace == ns && a.JobID == jobID {
			out = append(out, a)
		}
	}
	return out, nil
}

func (s *memState) AllocsByNode(nodeID string) ([]*structs.Allocation, error) {
	ids := s.byNode[nodeID]
	out := make([]*structs.Allocation, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.allocs[id])
	}
	return out, nil
}

func (s *memState) EvalByID(id string) (*structs.Evaluation, error) { return s.evals[id], nil }

func (s *memState) SchedulerConfig() (*structs.SchedulerConfiguration, error) { return s.config, nil }

func (s *memState) LatestIndex() (uint64, error) { return s.index, nil }

func (s *memState) upsertNode(n *structs.Node) {
	s.index++
	n.ModifyIndex = s.index
	for i, old := range s.nodes {
		if old.ID == n.ID {
			s.nodes[i] = n
			return
		}
	}
	n.CreateIndex = s.index
	s.nodes = append(s.nodes, n)
}

func (s *memState) upsertJob(j *structs.Job) {
	s.index++
	j.ModifyIndex = s.index
	j.JobModifyIndex = s.index
	s.jobs[j.NamespacedID()] = j
}

func (s *memState) upsertAlloc(a *structs.Allocation) {
	if _, ok := s.allocs[a.ID]; !ok {
		s.order = append(s.order, a.ID)
		s.byNode[a.NodeID] = append(s.byNode[a.NodeID], a.ID)
	}
	s.allocs[a.ID] = a
}

// Harness runs a scheduler against memState and records what it asks of
// the planner. Its plan applier commits each node's part only when the
// node is ready and the allocations fit, like the server's.
type Harness struct {
	t     testing.TB
	State *memState
	Now   time.Time
	Rand  *rand.Rand

	Plans     []*structs.Plan
	Results   []*structs.PlanResult
	Updated   []*structs.Evaluation
	Created   []*structs.Evaluation
	Reblocked []*structs.Evaluation

	// BeforeApply runs before each plan is applied, to change state
	// behind the scheduler's back.
	BeforeApply func(h *Harness, p *structs.Plan)
	// NoApply makes SubmitPlan commit without touching state (for
	// benchmarking the scheduler alone).
	NoApply bool
	// RejectAll makes the applier commit nothing and ask for a refresh.
	RejectAll bool
	// WriteEvalUpdate makes the applier write a fully committed plan's
	// EvalUpdate with it, as the server's does; such writes are recorded
	// in WithPlan, not Updated.
	WriteEvalUpdate bool
	WithPlan        []*structs.Evaluation
	// Shared, when set, is the node list the scheduler reads through
	// NodeSetState, as the server's snapshots share one between
	// evaluations; Process fills it from State.
	Shared *sharedNodes
}

// sharedNodes serves a node list and map through NodeSetState.
type sharedNodes struct {
	*memState
	nodes []*structs.Node
	byID  map[string]*structs.Node
	ready map[string]map[string]int
}

func (s *sharedNodes) NodeSet() ([]*structs.Node, map[string]*structs.Node, error) {
	return s.nodes, s.byID, nil
}

// ReadyNodeCounts serves counts kept with the set (ReadyCountState), as
// the server's snapshots do, or counts the set's nodes.
func (s *sharedNodes) ReadyNodeCounts() (map[string]map[string]int, error) {
	if s.ready != nil {
		return s.ready, nil
	}
	return structs.CountReadyNodes(s.nodes), nil
}

// fixedShared is a shared node set built once from the harness's nodes,
// as a server serves one version of the nodes table to every eval.
func (h *Harness) fixedShared() *sharedNodes {
	s := &sharedNodes{memState: h.State, nodes: h.State.nodes, byID: make(map[string]*structs.Node, len(h.State.nodes))}
	for _, n := range s.nodes {
		s.byID[n.ID] = n
	}
	s.ready = structs.CountReadyNodes(s.nodes)
	return s
}

func newHarness(t testing.TB) *Harness {
	return &Harness{t: t, State: newMemState(), Now: time.Unix(1_700_000_000, 0)}
}

func (h *Harness) SubmitPlan(p *structs.Plan) (*structs.PlanResult, State, error) {
	h.Plans = append(h.Plans, p)
	if h.BeforeApply != nil {
		h.BeforeApply(h, p)
	}
	if h.NoApply {
		r := &structs.PlanResult{NodeUpdate: p.NodeUpdate, NodeAllocation: p.NodeAllocation}
		h.Results = append(h.Results, r)
		return r, nil, nil
	}
	if h.RejectAll {
		h.State.index++
		r := &structs.PlanResult{RefreshIndex: h.State.index}
		h.Results = append(h.Results, r)
		return r, h.State, nil
	}
	r := h.apply(p)
	if full, _, _ := r.FullCommit(p); full && h.WriteEvalUpdate && p.EvalUpdate != nil {
		h.WithPlan = append(h.WithPlan, p.EvalUpdate)
		h.State.evals[p.EvalUpdate.ID] = p.EvalUpdate
		r.EvalUpdated = true
	}
	h.Results = append(h.Results, r)
	if r.RefreshIndex != 0 {
		return r, h.State, nil
	}
	return r, nil, nil
}

func (h *Harness) apply(p *structs.Plan) *structs.PlanResult {
	s := h.State
	s.index++
	idx := s.index
	r := &structs.PlanResult{NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{}, AllocIndex: idx}
	removed := make(map[string]bool)
	for _, as := range p.NodeUpdate {
		for _, a := range as {
			removed[a.ID] = true
		}
	}
	for _, as := range p.NodeAllocation {
		for _, a := range as {
			removed[a.ID] = true
		}
	}
	var commit []*structs.Allocation
	for nodeID, as := range p.NodeAllocation {
		n, _ := s.NodeByID(nodeID)
		if n == nil || n.Status != structs.NodeStatusReady {
			r.RefreshIndex = idx
			continue
		}
		var used structs.ComparableResources
		var holders []*structs.Allocation
		for _, id := range s.byNode[nodeID] {
			if a := s.allocs[id]; !a.TerminalStatus() && !removed[id] {
				used.Add(allocUsage(a))
				holders = append(holders, a)
			}
		}
		for _, a := range as {
			if !a.TerminalStatus() {
				used.Add(allocUsage(a))
				holders = append(holders, a)
			}
		}
		if ok, _ := n.Comparable().Superset(used); !ok || structs.HostClaimCollision(n.ReservedHostPorts(), holders) != "" {
			r.RefreshIndex = idx
			continue
		}
		r.NodeAllocation[nodeID] = as
		commit = append(commit, as...)
	}
	for nodeID, as := range p.NodeUpdate {
		r.NodeUpdate[nodeID] = as
		for _, a := range as {
			c := *a
			c.ModifyIndex = idx
			s.upsertAlloc(&c)
		}
	}
	for _, a := range commit {
		c := *a
		if old, ok := s.allocs[a.ID]; ok {
			c.CreateTime = old.CreateTime
			c.CreateIndex = old.CreateIndex
		} else {
			c.CreateTime = h.Now.UnixNano()
			c.CreateIndex = idx
		}
		c.ModifyIndex = idx
		s.upsertAlloc(&c)
		if prev, ok := s.allocs[c.PreviousAllocation]; ok && c.PreviousAllocation != "" {
			pc := *prev
			pc.NextAllocation = c.ID
			s.allocs[pc.ID] = &pc
		}
	}
	return r
}

func (h *Harness) UpdateEval(e *structs.Evaluation) error {
	h.Updated = append(h.Updated, e)
	h.State.evals[e.ID] = e
	return nil
}

func (h *Harness) CreateEval(e *structs.Evaluation) error {
	h.Created = append(h.Created, e)
	h.State.evals[e.ID] = e
	return nil
}

func (h *Harness) ReblockEval(e *structs.Evaluation) error {
	h.Reblocked = append(h.Reblocked, e)
	h.State.evals[e.ID] = e
	return nil
}

// Process runs the scheduler of the given type on eval.
func (h *Harness) Process(schedType string, eval *structs.Evaluation) error {
	h.State.evals[eval.ID] = eval
	var st State = h.State
	if h.Shared != nil {
		h.Shared.memState = h.State
		h.Shared.nodes = h.State.nodes
		h.Shared.byID = make(map[string]*structs.Node)
		for _, n := range h.State.nodes {
			h.Shared.byID[n.ID] = n
		}
		st = h.Shared
	}
	s, err := NewScheduler(schedType, Config{Now: func() time.Time { return h.Now }, Rand: h.Rand}, st, h)
	must.NoError(h.t, err)
	return s.Process(eval)
}

// run processes a fresh register eval for job and returns it.
func (h *Harness) run(job *structs.Job) *structs.Evaluation {
	h.t.Helper()
	e := mockEval(job)
	must.NoError(h.t, h.Process(job.Type, e))
	return e
}

// lastEval is the evaluation as the scheduler last updated it.
func (h *Harness) lastEval() *structs.Evaluation {
	h.t.Helper()
	must.SliceNotEmpty(h.t, h.Updated)
	return h.Updated[len(h.Updated)-1]
}

// placed returns all allocations placed (new IDs) by the recorded plans.
func (h *Harness) placed() []*structs.Allocation {
	var out []*structs.Allocation
	for _, p := range h.Plans {
		for _, as := range p.NodeAllocation {
			out = append(out, as...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// stopped returns all allocations stopped by the recorded plans.
func (h *Harness) stopped() []*structs.Allocation {
	var out []*structs.Allocation
	for _, p := range h.Plans {
		for _, as := range p.NodeUpdate {
			out = append(out, as...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// liveAllocs returns the job's non-terminal allocations in state.
func (h *Harness) liveAllocs(job *structs.Job) []*structs.Allocation {
	all, _ := h.State.AllocsByJob(job.Namespace, job.ID)
	var out []*structs.Allocation
	for _, a := range all {
		if !a.TerminalStatus() {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func names(as []*structs.Allocation) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}

func mockNode(i int) *structs.Node {
	return &structs.Node{
		ID:         fmt.Sprintf("node-%04d", i),
		Name:       fmt.Sprintf("client-%d", i),
		Datacenter: "dc1",
		NodePool:   structs.DefaultNodePool,
		NodeClass:  "",
		Attributes: map[string]string{
			"kernel.name":     "linux",
			"cpu.arch":        "amd64",
			"nomad.version":   "1.9.3",
			"os.version":      "22.04",
			"cpu.numcores":    "8",
			"unique.hostname": fmt.Sprintf("host-%d", i),
		},
		Meta: map[string]string{"rack": fmt.Sprintf("r%d", i%2), "tags": "ssd,gpu"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100_000},
		},
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec": {Detected: true, Healthy: true},
		},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}
}

// addNodes registers n mock nodes, letting mod adjust each.
func (h *Harness) addNodes(n int, mod func(i int, node *structs.Node)) []*structs.Node {
	out := make([]*structs.Node, n)
	base := len(h.State.nodes)
	for i := range n {
		node := mockNode(base + i)
		if mod != nil {
			mod(i, node)
		}
		h.State.upsertNode(node)
		out[i] = node
	}
	return out
}

func mockJob(id, typ string, count int) *structs.Job {
	return &structs.Job{
		Region:      structs.DefaultRegion,
		Namespace:   structs.DefaultNamespace,
		ID:          id,
		Name:        id,
		Type:        typ,
		Priority:    50,
		Datacenters: []string{"dc1"},
		NodePool:    structs.DefaultNodePool,
		TaskGroups: []*structs.TaskGroup{{
			Name:          "work",
			Count:         count,
			EphemeralDisk: &structs.EphemeralDisk{SizeMB: 150},
			Tasks: []*structs.Task{{
				Name:      "main",
				Driver:    "raw_exec",
				Config:    map[string]any{"command": "/bin/true"},
				Resources: &structs.Resources{CPU: 500, MemoryMB: 256},
			}},
		}},
	}
}

func mockEval(job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      job.Namespace,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerJobRegister,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
	}
}

// pinRunning moves every allocation in state onto node, running.
func (h *Harness) pinRunning(node *structs.Node) {
	for _, a := range h.State.allocs {
		h.State.byNode[a.NodeID] = nil
		a.NodeID = node.ID
		a.ClientStatus = structs.AllocClientStatusRunning
	}
	h.State.byNode[node.ID] = append([]string(nil), h.State.order...)
}
