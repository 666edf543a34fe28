package scheduler

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func perNode(as []*structs.Allocation) map[string]int {
	m := map[string]int{}
	for _, a := range as {
		m[a.NodeID]++
	}
	return m
}

func TestSysBatch_OnePerFeasibleNodeAndNoRerun(t *testing.T) {
	h := newHarness(t)
	h.addNodes(5, func(i int, n *structs.Node) {
		switch i {
		case 3:
			n.Status = structs.NodeStatusDown
		case 4:
			n.Attributes["kernel.name"] = "windows"
		}
	})
	job := mockJob("sweep", structs.JobTypeSysBatch, 1)
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	h.State.upsertJob(job)
	h.run(job)

	placed := h.placed()
	must.Len(t, 3, placed)
	must.MapLen(t, 3, perNode(placed))
	for _, a := range placed {
		must.Eq(t, "sweep.work[0]", a.Name)
	}
	must.MapEmpty(t, h.lastEval().FailedTGAllocs)

	// Once they complete, nothing runs again, even on a new eval.
	for _, a := range h.State.allocs {
		a.ClientStatus = structs.AllocClientStatusComplete
	}
	h.Plans = nil
	h.run(job)
	must.SliceEmpty(t, h.Plans)

	// A new node gets its run.
	nn := h.addNodes(1, nil)
	h.run(job)
	must.Len(t, 1, h.placed())
	must.Eq(t, nn[0].ID, h.placed()[0].NodeID)
}

func TestSystem_NewNodeGetsAlloc(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, nil)
	job := mockJob("agent", structs.JobTypeSystem, 1)
	h.State.upsertJob(job)
	h.run(job)
	must.Len(t, 2, h.liveAllocs(job))

	n := h.addNodes(1, nil)[0]
	h.Plans = nil
	e := mockEval(job)
	e.TriggeredBy = structs.EvalTriggerNodeUpdate
	e.NodeID = n.ID
	must.NoError(t, h.Process(job.Type, e))
	must.Len(t, 1, h.placed())
	must.Eq(t, n.ID, h.placed()[0].NodeID)
	must.MapLen(t, 3, perNode(h.liveAllocs(job)))

	// A failed system alloc is replaced on its node.
	for _, a := range h.State.allocs {
		if a.NodeID == n.ID {
			a.ClientStatus = structs.AllocClientStatusFailed
		}
	}
	h.Plans = nil
	h.run(job)
	must.Len(t, 1, h.placed())
	must.Eq(t, n.ID, h.placed()[0].NodeID)
}

func TestSystem_InfeasibleAndDownNodesStop(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(3, nil)
	job := mockJob("agent", structs.JobTypeSystem, 1)
	h.State.upsertJob(job)
	h.run(job)
	for _, a := range h.State.allocs {
		a.ClientStatus = structs.AllocClientStatusRunning
	}

	nodes[0].Attributes["kernel.name"] = "windows"
	nodes[1].Status = structs.NodeStatusDown
	nodes[2].SchedulingEligibility = structs.NodeSchedulingIneligible // keeps its alloc
	extra := h.addNodes(1, nil)[0]
	extra.Status = structs.NodeStatusDisconnected
	h.State.upsertAlloc(&structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, Job: job, TaskGroup: "work", Name: "agent.work[0]",
		NodeID: extra.ID, DesiredStatus: "run", ClientStatus: "running",
	}) // a disconnected node's alloc is left alone
	job2 := *job
	job2.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	h.State.upsertJob(&job2)
	h.Plans = nil
	h.run(&job2)

	byNode := map[string]*structs.Allocation{}
	for _, a := range h.stopped() {
		byNode[a.NodeID] = a
	}
	must.MapLen(t, 2, byNode)
	must.Eq(t, descInfeasible, byNode[nodes[0].ID].DesiredDescription)
	must.Eq(t, structs.AllocClientStatusLost, byNode[nodes[1].ID].ClientStatus)
	var live []*structs.Allocation
	for _, a := range h.liveAllocs(&job2) {
		if a.NodeID != extra.ID {
			live = append(live, a)
		}
	}
	must.Len(t, 2, h.liveAllocs(&job2))
	must.Len(t, 1, live)
	must.Eq(t, nodes[2].ID, live[0].NodeID)
	// The constraint change reaches the surviving alloc in place.
	must.Len(t, 1, h.placed())
	must.Eq(t, live[0].ID, h.placed()[0].ID)
	must.Eq(t, job2.Version, live[0].Job.Version)
}

func TestSystem_ExhaustedNodeRecordsFailure(t *testing.T) {
	h := newHarness(t)
	h.addNodes(3, func(i int, n *structs.Node) {
		if i == 0 {
			n.NodeResources.Memory.MemoryMB = 100
		}
	})
	job := mockJob("agent", structs.JobTypeSystem, 1)
	h.State.upsertJob(job)
	h.run(job)
	must.Len(t, 2, h.placed())
	e := h.lastEval()
	m := e.FailedTGAllocs["work"]
	must.NotNil(t, m)
	must.Eq(t, map[string]int{"memory": 1}, m.DimensionExhausted)
	must.False(t, m.Infeasible) // other nodes could hold it
	must.Eq(t, 1, e.QueuedAllocations["work"])
	must.Len(t, 1, h.Created)
	must.Eq(t, structs.EvalStatusBlocked, h.Created[0].Status)
}

func TestSystem_JobStopStopsAll(t *testing.T) {
	h := newHarness(t)
	h.addNodes(3, nil)
	job := mockJob("agent", structs.JobTypeSystem, 1)
	h.State.upsertJob(job)
	h.run(job)
	stopped := *job
	stopped.Stop = true
	h.State.upsertJob(&stopped)
	h.Plans = nil
	h.run(&stopped)
	must.Len(t, 3, h.stopped())
	must.SliceEmpty(t, h.liveAllocs(job))
}

func TestSysBatch_InPlaceMaxRunDuration(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, nil)
	job := mockJob("sweep", structs.JobTypeSysBatch, 1)
	h.State.upsertJob(job)
	h.run(job)
	before := h.liveAllocs(job)
	job2 := *job
	tg := *job.TaskGroups[0]
	tg.MaxRunDuration = durationPtr(int(time.Hour))
	job2.TaskGroups = []*structs.TaskGroup{&tg}
	job2.Version++
	h.State.upsertJob(&job2)
	h.Plans = nil
	h.run(&job2)
	must.SliceEmpty(t, h.stopped())
	updated := h.placed()
	must.Len(t, 2, updated)
	ids := map[string]bool{before[0].ID: true, before[1].ID: true}
	for _, a := range updated {
		must.True(t, ids[a.ID])
		must.Eq(t, &job2, a.Job)
	}
}

func durationPtr(ns int) *time.Duration {
	d := time.Duration(ns)
	return &d
}
