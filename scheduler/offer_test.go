package scheduler

import (
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// portNode is a mock node with an address, a dynamic port range and
// four 1000 MHz cores.
func portNode(lo, hi int) func(int, *structs.Node) {
	return func(_ int, n *structs.Node) {
		n.NodeResources.Networks = []*structs.NetworkResource{{Mode: "host", IP: "10.0.0.7"}}
		n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = lo, hi
		n.NodeResources.Cpu = structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4}
	}
}

func withPorts(j *structs.Job, static map[string]int, dynamic ...string) *structs.Job {
	nw := &structs.NetworkResource{Mode: "host"}
	for _, l := range slices.Sorted(func(yield func(string) bool) {
		for k := range static {
			if !yield(k) {
				return
			}
		}
	}) {
		nw.ReservedPorts = append(nw.ReservedPorts, structs.Port{Label: l, Value: static[l]})
	}
	for _, l := range dynamic {
		nw.DynamicPorts = append(nw.DynamicPorts, structs.Port{Label: l})
	}
	j.TaskGroups[0].Networks = []*structs.NetworkResource{nw}
	return j
}

func TestPorts_DynamicPortsDifferOnOneNode(t *testing.T) {
	h := newHarness(t)
	h.addNodes(1, portNode(20000, 20010))
	job := withPorts(mockJob("web", structs.JobTypeService, 3), nil, "http", "admin")
	h.State.upsertJob(job)
	h.run(job)

	placed := h.placed()
	must.Len(t, 3, placed)
	seen := map[int]bool{}
	for _, a := range placed {
		shared := a.AllocatedResources.Shared
		must.Len(t, 2, shared.Ports)
		must.Len(t, 1, shared.Networks)
		must.Eq(t, "10.0.0.7", shared.Networks[0].IP)
		for i, p := range shared.Ports {
			must.Eq(t, []string{"http", "admin"}[i], p.Label)
			must.Eq(t, "10.0.0.7", p.HostIP)
			must.Between(t, 20000, p.Value, 20010)
			must.False(t, seen[p.Value], must.Sprintf("port %d given twice", p.Value))
			seen[p.Value] = true
			must.Eq(t, p.Value, shared.Networks[0].DynamicPorts[i].Value)
		}
	}
}

func TestPorts_Exhaustion(t *testing.T) {
	cases := []struct {
		name    string
		node    func(int, *structs.Node)
		held    *structs.Job // placed first, on its own
		job     *structs.Job
		placed  int
		wantDim string
	}{
		{
			name:    "dynamic range full",
			node:    portNode(20000, 20001),
			job:     withPorts(mockJob("web", structs.JobTypeService, 3), nil, "http"),
			placed:  2,
			wantDim: "network: dynamic port selection failed: ports exhausted",
		},
		{
			name:    "static port held by another job",
			node:    portNode(20000, 20100),
			held:    withPorts(mockJob("first", structs.JobTypeService, 1), map[string]int{"http": 8080}),
			job:     withPorts(mockJob("second", structs.JobTypeService, 1), map[string]int{"http": 8080}),
			placed:  0,
			wantDim: "network: reserved port collision http=8080",
		},
		{
			name:    "static port asked twice by one job",
			node:    portNode(20000, 20100),
			job:     withPorts(mockJob("web", structs.JobTypeService, 2), map[string]int{"http": 8080}),
			placed:  1,
			wantDim: "network: reserved port collision http=8080",
		},
		{
			name: "static port reserved by the node",
			node: func(i int, n *structs.Node) {
				portNode(20000, 20100)(i, n)
				n.ReservedResources = &structs.NodeReservedResources{Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: "22,8000-8100"}}
			},
			job:     withPorts(mockJob("web", structs.JobTypeService, 1), map[string]int{"http": 8080}),
			placed:  0,
			wantDim: "network: reserved port collision http=8080",
		},
		{
			name: "dynamic range minus the node's reserved ports",
			node: func(i int, n *structs.Node) {
				portNode(20000, 20002)(i, n)
				n.ReservedResources = &structs.NodeReservedResources{Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: "20001"}}
			},
			job:     withPorts(mockJob("web", structs.JobTypeService, 3), nil, "http"),
			placed:  2,
			wantDim: "network: dynamic port selection failed: ports exhausted",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(1, tc.node)
			if tc.held != nil {
				h.State.upsertJob(tc.held)
				h.run(tc.held)
				must.Len(t, 1, h.placed())
				h.Plans = nil
			}
			h.State.upsertJob(tc.job)
			h.run(tc.job)
			must.Len(t, tc.placed, h.placed())
			f := h.lastEval().FailedTGAllocs["work"]
			must.NotNil(t, f)
			must.Eq(t, 1, f.DimensionExhausted[tc.wantDim])
			must.False(t, f.Infeasible)
		})
	}
}

func TestPorts_StoppedAllocFreesItsPort(t *testing.T) {
	h := newHarness(t)
	h.addNodes(1, portNode(20000, 20000))
	job := withPorts(mockJob("web", structs.JobTypeService, 1), nil, "http")
	h.State.upsertJob(job)
	h.run(job)
	first := h.placed()
	must.Len(t, 1, first)

	// A new version replaces the alloc: the stop and the placement are
	// in one plan, and the one port of the range passes to the new one.
	next := job.Copy()
	next.Version++
	next.TaskGroups[0].Meta = map[string]string{"v": "2"}
	h.State.upsertJob(next)
	h.Plans = nil
	h.run(next)
	must.Len(t, 1, h.stopped())
	placed := h.placed()
	must.Len(t, 1, placed)
	must.Eq(t, 20000, placed[0].AllocatedResources.Shared.Ports[0].Value)
}

func TestCores_ReservedApartAndCounted(t *testing.T) {
	h := newHarness(t)
	h.addNodes(1, portNode(20000, 20100))
	job := mockJob("crunch", structs.JobTypeBatch, 3)
	job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{Cores: 2, MemoryMB: 256}
	h.State.upsertJob(job)
	h.run(job)

	placed := h.placed()
	must.Len(t, 2, placed)
	held := map[uint16]bool{}
	for _, a := range placed {
		tr := a.AllocatedResources.Tasks["main"]
		must.Len(t, 2, tr.Cpu.ReservedCores)
		must.Eq(t, int64(2000), tr.Cpu.CpuShares)
		must.Eq(t, 2000, a.TaskResources["main"].CPU)
		must.Eq(t, 2, a.TaskResources["main"].Cores)
		for _, c := range tr.Cpu.ReservedCores {
			must.False(t, held[c], must.Sprintf("core %d reserved twice", c))
			held[c] = true
		}
	}
	f := h.lastEval().FailedTGAllocs["work"]
	must.NotNil(t, f)
	// The third alloc finds all cores and all CPU taken; cores are
	// assigned first.
	must.Eq(t, 1, f.DimensionExhausted["cores"])
}

// A group asking more cores than any node has is a placement failure
// worded as Nomad words it: the node is exhausted in dimension "cores"
// (not filtered by a constraint), and the eval blocks until capacity
// appears, as Nomad's bin-packer decides.
func TestCores_MoreThanAnyNodeHasIsExhaustion(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, portNode(20000, 20100))
	job := mockJob("huge", structs.JobTypeBatch, 1)
	job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{Cores: 8, MemoryMB: 256}
	h.State.upsertJob(job)
	h.run(job)

	must.Len(t, 0, h.placed())
	f := h.lastEval().FailedTGAllocs["work"]
	must.NotNil(t, f)
	must.Eq(t, 2, f.NodesEvaluated)
	must.Eq(t, 0, f.NodesFiltered)
	must.Eq(t, 2, f.NodesExhausted)
	must.Eq(t, map[string]int{"cores": 2}, f.DimensionExhausted)
	must.SliceLen(t, 1, h.Created)
	must.Eq(t, structs.EvalStatusBlocked, h.Created[0].Status)
}

func TestFeasibility_HostVolumes(t *testing.T) {
	vol := func(ro bool) func(int, *structs.Node) {
		return func(_ int, n *structs.Node) {
			n.HostVolumes = map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared", ReadOnly: ro}}
		}
	}
	cases := []struct {
		name     string
		node     func(int, *structs.Node)
		readOnly bool
		placed   int
		reason   string
	}{
		{"present", vol(false), false, 1, ""},
		{"missing", nil, false, 0, `no node has host volume "shared"`},
		{"read-only on the node, written by the job", vol(true), false, 0, `no node has writable host volume "shared"`},
		{"read-only on both", vol(true), true, 1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(1, tc.node)
			job := mockJob("j", structs.JobTypeBatch, 1)
			job.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared", ReadOnly: tc.readOnly}}
			h.State.upsertJob(job)
			h.run(job)
			must.Len(t, tc.placed, h.placed())
			if tc.reason == "" {
				return
			}
			f := h.lastEval().FailedTGAllocs["work"]
			must.NotNil(t, f)
			must.Eq(t, map[string]int{"missing compatible host volumes": 1}, f.ConstraintFiltered)
			must.True(t, f.Infeasible)
			must.Eq(t, tc.reason, f.InfeasibleReason)
		})
	}
}
