package nomad

import (
	"sync"
	"sync/atomic"
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
func TestEvaluatePlan_HostPortAndCoreCollisions(t *testing.T) {
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
			res, err := evaluatePlan(snap, plan, nil, hclog.NewNullLogger())
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
func TestEvaluatePlan_CountsPlansInFlight(t *testing.T) {
	st, node := planTestStore(t, "")
	alloc := func(mem int64, port int) *structs.Allocation { return planTestAlloc(node, mem, port) }

	fits := func(inflight *inflightPlans, a *structs.Allocation) bool {
		t.Helper()
		snap, err := st.Snapshot()
		must.NoError(t, err)
		plan := &structs.Plan{EvalID: "e"}
		plan.AppendAlloc(a)
		res, err := evaluatePlan(snap, plan, inflight, hclog.NewNullLogger())
		must.NoError(t, err)
		_, ok := res.NodeAllocation[node.ID]
		return ok
	}

	inflight := &inflightPlans{}
	first := alloc(5000, 20000)
	applied := make(chan struct{})
	inflight.add(map[string][]*structs.Allocation{node.ID: {first}}, applied)

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
		inflight.prune()
		return len(inflight.plans) == 0
	}), wait.Timeout(5*time.Second), wait.Gap(5*time.Millisecond)))
	must.False(t, fits(inflight, alloc(4000, 20001)), must.Sprint("memory held by the stored alloc"))
}

// countingApply is a Raft entry's future that counts its waiters and
// completes when told.
type countingApply struct {
	done    chan struct{}
	waiters atomic.Int32
}

func (f *countingApply) Error() error {
	f.waiters.Add(1)
	<-f.done
	return nil
}
func (f *countingApply) Response() any { return "applied" }
func (f *countingApply) Index() uint64 { return 42 }

// A plan's entry is waited for by the applier's in-flight count and by
// the worker; raft's future is waited on once for both.
func TestSharedApply_ManyWaitersOneRaftWait(t *testing.T) {
	f := &countingApply{done: make(chan struct{})}
	shared := newSharedApply(f)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			must.NoError(t, shared.Error())
			must.Eq(t, "applied", shared.Response())
			must.Eq(t, 42, shared.Index())
		})
	}
	select {
	case <-shared.done:
		t.Fatal("done before the entry was applied")
	case <-time.After(20 * time.Millisecond):
	}
	close(f.done)
	wg.Wait()
	must.Eq(t, 1, f.waiters.Load())
}

// A plan rejected in full because plans in flight filled its node is
// answered with a refresh index that holds them: refreshed to the
// snapshot it was checked against, the scheduler would see the same room
// and pick the same node until its plan attempts ran out.
func TestApplyPlan_RejectedByPlansInFlightRefreshesPastThem(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	node := mockNode(structs.GenerateUUID())
	var nr structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node}, &nr))
	job := mockJob("filler")
	job.Canonicalize()
	registerJob(t, s, job)
	stored, err := s.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)

	// 40 allocs of 100 MHz fill the node's 4000; their entry is written
	// only after the next plan was checked against the store: once the
	// applier waits for the plans in flight, or (without that wait) once
	// it has answered.
	var fill []*structs.Allocation
	for range 40 {
		fill = append(fill, mockAlloc(stored, node, structs.GenerateUUID()))
	}
	waiting, answered := make(chan struct{}), make(chan struct{})
	inflight := &inflightPlans{waiting: func() { close(waiting) }}
	applied := make(chan struct{})
	inflight.add(map[string][]*structs.Allocation{node.ID: fill}, applied)
	fillIndex := make(chan uint64, 1)
	go func() {
		defer close(applied)
		select {
		case <-waiting:
		case <-answered:
		}
		_, index, err := s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: fill, Job: stored})
		if err != nil {
			t.Error(err)
		}
		fillIndex <- index
	}()

	plan := &structs.Plan{Job: stored, NodeAllocation: map[string][]*structs.Allocation{
		node.ID: {mockAlloc(stored, node, structs.GenerateUUID())}}}
	result, future, err := s.applyPlan(plan, inflight)
	close(answered)
	must.NoError(t, err)
	must.Nil(t, future)
	must.MapEmpty(t, result.NodeAllocation, must.Sprint("the node is full with the plans in flight"))
	index := <-fillIndex
	must.GreaterEq(t, index, result.RefreshIndex, must.Sprintf("refresh to %d, the filling entry is at %d", result.RefreshIndex, index))
}
