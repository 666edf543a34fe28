package nomad

import (
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Two schedulers may each give out the same free port or core from the
// same snapshot; the plan applier lets only the first through.
func TestEvaluatePlan_HostPortAndCoreCollisions(t *testing.T) {
	node := &structs.Node{
		ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: "n1", Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 10000},
		},
		ReservedResources: &structs.NodeReservedResources{Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: "22"}},
	}
	alloc := func(port int, cores ...uint16) *structs.Allocation {
		return &structs.Allocation{
			ID: structs.GenerateUUID(), Namespace: structs.DefaultNamespace, JobID: "j", TaskGroup: "g", NodeID: node.ID,
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			AllocatedResources: &structs.AllocatedResources{
				Tasks: map[string]*structs.AllocatedTaskResources{"t": {
					Cpu:    structs.AllocatedCpuResources{CpuShares: 100, ReservedCores: cores},
					Memory: structs.AllocatedMemoryResources{MemoryMB: 64},
				}},
				Shared: structs.AllocatedSharedResources{
					Networks: []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "http", Value: port}}}},
					Ports:    []structs.AllocatedPortMapping{{Label: "http", Value: port}},
				},
			},
		}
	}
	st, err := state.NewStateStore()
	must.NoError(t, err)
	must.NoError(t, st.UpsertNode(10, node))
	job := &structs.Job{ID: "j", Name: "j", Namespace: structs.DefaultNamespace, Type: structs.JobTypeBatch, Priority: 50,
		Datacenters: []string{"dc1"}, NodePool: structs.DefaultNodePool,
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}}}}}
	must.NoError(t, st.UpsertJob(9, job))
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
			res, err := evaluatePlan(snap, plan, hclog.NewNullLogger())
			must.NoError(t, err)
			_, placed := res.NodeAllocation[node.ID]
			must.Eq(t, tc.fits, placed)
			must.Eq(t, !tc.fits, res.RefreshIndex != 0)
		})
	}
}
