package planfit

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// planTestStore is a store with one ready 4-core, 8 GiB node (reserving
// the host ports given) and a batch job "j" of one group "g".
func planTestStore(t *testing.T, reservedPorts string) (*state.StateStore, *structs.Node) {
	t.Helper()
	node := &structs.Node{
		ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: "n1", Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 10000},
		},
	}
	if reservedPorts != "" {
		node.ReservedResources = &structs.NodeReservedResources{Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: reservedPorts}}
	}
	st, err := state.NewStateStore()
	must.NoError(t, err)
	must.NoError(t, st.UpsertNode(10, node))
	job := &structs.Job{ID: "j", Name: "j", Namespace: structs.DefaultNamespace, Type: structs.JobTypeBatch, Priority: 50,
		Datacenters: []string{"dc1"}, NodePool: structs.DefaultNodePool,
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}}}}}
	must.NoError(t, st.UpsertJob(9, job))
	return st, node
}

// planTestAlloc is a pending alloc of job "j" on node holding mem MB and
// one host port.
func planTestAlloc(node *structs.Node, mem int64, port int) *structs.Allocation {
	return &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: structs.DefaultNamespace, JobID: "j", TaskGroup: "g", NodeID: node.ID,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"t": {
				Cpu:    structs.AllocatedCpuResources{CpuShares: 100},
				Memory: structs.AllocatedMemoryResources{MemoryMB: mem},
			}},
			Shared: structs.AllocatedSharedResources{
				Networks: []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "http", Value: port}}}},
				Ports:    []structs.AllocatedPortMapping{{Label: "http", Value: port}},
			},
		},
	}
}

// Two schedulers may each give out the same free port or core from the
// same snapshot; the plan applier lets only the first through.
func TestEvaluate_HostPortAndCoreCollisions(t *testing.T) {
	st, node := planTestStore(t, "22")
	alloc := func(port int, cores ...uint16) *structs.Allocation {
		a := planTestAlloc(node, 64, port)
		a.ClientStatus = structs.AllocClientStatusRunning
		a.AllocatedResources.Tasks["t"].Cpu.ReservedCores = cores
		return a
	}
	held := alloc(20000, 1)
	must.NoError(t, st.UpsertAllocs(11, []*structs.Allocation{held}))

	cases := []struct {
		name  string
		place *structs.Allocation
		stop  bool // the plan also stops the held alloc
		fits  bool
	}{
		{"free port and core", alloc(20001, 2), false, true},
		{"held port", alloc(20000, 2), false, false},
		{"held core", alloc(20001, 1), false, false},
		{"node's reserved port", alloc(22), false, false},
		{"held port freed by the same plan", alloc(20000, 1), true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := st.Snapshot()
			must.NoError(t, err)
			plan := &structs.Plan{EvalID: "e"}
			plan.AppendAlloc(tc.place)
			if tc.stop {
				plan.NodeUpdate = map[string][]*structs.Allocation{node.ID: {held}}
			}
			res, err := Evaluate(snap, plan, nil, hclog.NewNullLogger())
			must.NoError(t, err)
			_, placed := res.NodeAllocation[node.ID]
			must.Eq(t, tc.fits, placed)
			must.Eq(t, !tc.fits, res.RefreshIndex != 0)
		})
	}
}

// Placements of plans answered before their entry was applied count
// against their nodes, ports and cores included, until the entry is
// applied; then the state holds them, and they are not counted twice.
func TestEvaluate_CountsPlansInFlight(t *testing.T) {
	st, node := planTestStore(t, "")
	alloc := func(mem int64, port int) *structs.Allocation { return planTestAlloc(node, mem, port) }

	fits := func(inflight *Inflight, a *structs.Allocation) bool {
		t.Helper()
		snap, err := st.Snapshot()
		must.NoError(t, err)
		plan := &structs.Plan{EvalID: "e"}
		plan.AppendAlloc(a)
		res, err := Evaluate(snap, plan, inflight, hclog.NewNullLogger())
		must.NoError(t, err)
		_, ok := res.NodeAllocation[node.ID]
		return ok
	}

	inflight := &Inflight{}
	first := alloc(5000, 20000)
	applied := make(chan struct{})
	inflight.Add(map[string][]*structs.Allocation{node.ID: {first}}, applied)

	must.False(t, fits(inflight, alloc(4000, 20001)), must.Sprint("memory held by the plan in flight"))
	must.False(t, fits(inflight, alloc(100, 20000)), must.Sprint("port held by the plan in flight"))
	must.True(t, fits(inflight, alloc(3000, 20001)))
	must.True(t, fits(nil, alloc(4000, 20000)), must.Sprint("without the plan in flight"))

	// The entry is applied: the store holds the alloc, which must not be
	// counted twice while the applier has yet to notice.
	must.NoError(t, st.UpsertAllocs(11, []*structs.Allocation{first}))
	must.True(t, fits(inflight, alloc(3000, 20001)))
	close(applied)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		inflight.Prune()
		return inflight.Len() == 0
	}), wait.Timeout(5*time.Second), wait.Gap(5*time.Millisecond)))
	must.False(t, fits(inflight, alloc(4000, 20001)), must.Sprint("memory held by the stored alloc"))
}
