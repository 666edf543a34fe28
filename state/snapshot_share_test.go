package state

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestRestoreFrom_SharesRepeatedValues: a restored store holds one copy of
// the values its allocs repeat (node IDs, statuses, a job version's equal
// resources), as the live store that wrote the snapshot did, and still
// gives each alloc its own values where they differ.
func TestRestoreFrom_SharesRepeatedValues(t *testing.T) {
	s := testStore(t)
	job := mockBatchJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	node := newID()
	allocs := make([]*structs.Allocation, 4)
	for i := range allocs {
		allocs[i] = mockAlloc(job, node, newID(), structs.AllocClientStatusComplete)
		allocs[i].TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateDead}}
	}
	// The last alloc was given more memory: it must keep its own.
	allocs[3].AllocatedResources.Tasks["server"].Memory.MemoryMB = 128
	must.NoError(t, s.UpsertAllocs(2, allocs))
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{
		mockEval(job, structs.EvalStatusComplete), mockEval(job, structs.EvalStatusComplete),
	}))

	restored := restoreCopy(t, s)
	must.Eq(t, dumpState(t, &s.reader), dumpState(t, &restored.reader))

	got, err := restored.Allocs(nil)
	must.NoError(t, err)
	must.SliceLen(t, 4, got)
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	resources := make(map[*structs.AllocatedResources]int)
	for _, a := range got {
		must.True(t, same(a.NodeID, got[0].NodeID), must.Sprint("one copy of the node ID"))
		must.True(t, same(a.ClientStatus, got[0].ClientStatus))
		must.True(t, same(a.TaskStates["server"].State, got[0].TaskStates["server"].State))
		must.True(t, same(a.JobID, a.Job.ID), must.Sprint("the job ID is the shared Job's"))
		resources[a.AllocatedResources]++
	}
	counts := make([]int, 0, len(resources))
	for ar, n := range resources {
		counts = append(counts, n)
		if n == 1 {
			must.Eq(t, 128, ar.Tasks["server"].Memory.MemoryMB)
		}
	}
	must.SliceContainsAll(t, []int{3, 1}, counts, must.Sprint("equal resources shared, the different one kept"))

	evals, err := restored.EvalsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.SliceLen(t, 2, evals)
	must.True(t, same(evals[0].Status, evals[1].Status))
	must.True(t, same(evals[0].JobID, evals[1].JobID))
}

// TestRestoreFrom_AllocResourcesOfEveryShape: allocs whose resources are
// shared, differ in their tasks or are missing restore as they were, in
// whatever order the stream has them (the restore decodes each alloc's
// resources into a value it reuses when they are shared).
func TestRestoreFrom_AllocResourcesOfEveryShape(t *testing.T) {
	s := testStore(t)
	job := mockBatchJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	node := newID()
	var allocs []*structs.Allocation
	// IDs in stream order: the id index orders them by their digits.
	for i, shape := range []string{"two tasks", "shared", "shared", "none", "shared", "other memory", "two tasks", "shared"} {
		a := mockAlloc(job, node, newID(), structs.AllocClientStatusComplete)
		a.ID = fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
		switch shape {
		case "two tasks":
			a.AllocatedResources.Tasks["sidecar"] = &structs.AllocatedTaskResources{
				Cpu:      structs.AllocatedCpuResources{CpuShares: 50},
				Networks: []*structs.NetworkResource{{Mode: "host", MBits: 10}},
			}
		case "none":
			a.AllocatedResources = nil
		case "other memory":
			a.AllocatedResources.Tasks["server"].Memory.MemoryMB = 999
		}
		allocs = append(allocs, a)
	}
	must.NoError(t, s.UpsertAllocs(2, allocs))

	restored := restoreCopy(t, s)
	must.Eq(t, dumpState(t, &s.reader), dumpState(t, &restored.reader))
	for _, want := range allocs {
		got, err := restored.AllocByID(nil, want.ID)
		must.NoError(t, err)
		must.Eq(t, want.AllocatedResources, got.AllocatedResources, must.Sprintf("alloc %s", want.ID))
	}
}
