package nomad

import (
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// A finished batch job is purged with its evals and allocs by the force-gc
// core eval, which runs through the workers and Raft like any eval; a
// running job is left alone.
func TestCoreScheduler_ForceGCPurgesFinishedJob(t *testing.T) {
	s, _ := serverWithNode(t)

	done := registerJob(t, s, mockJob("finished"))
	running := registerJob(t, s, mockJob("still-running"))
	waitEvalsTerminal(t, s, time.Minute)

	st := s.State()
	allocs, err := st.AllocsByJob(nil, structs.DefaultNamespace, "finished", true)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	finishedAlloc := allocs[0].Copy()
	finishedAlloc.ClientStatus = structs.AllocClientStatusComplete
	var ur structs.GenericResponse
	must.NoError(t, s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{finishedAlloc}}, &ur))
	waitForIndex(t, s, ur.Index)
	job, err := s.State().JobByID(nil, structs.DefaultNamespace, "finished")
	must.NoError(t, err)
	must.Eq(t, structs.JobStatusDead, job.Status)

	// Too few entries for the dev server to have snapshotted on its own.
	must.Eq(t, "0", s.raft.Stats()["last_snapshot_index"])
	must.NoError(t, s.createCoreEval(structs.CoreJobForceGC))

	// Watch the job until the purge lands.
	var index uint64
	deadline := time.Now().Add(time.Minute)
	for {
		var resp structs.SingleJobResponse
		must.NoError(t, s.RPC("Job.Get", &structs.JobSpecificRequest{JobID: "finished", QueryOptions: structs.QueryOptions{
			MinQueryIndex: index, MaxQueryTime: int64(5 * time.Second),
		}}, &resp))
		index = resp.Index
		if resp.Job == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("finished job was not garbage collected")
		}
	}
	st = s.State()
	gone, err := st.EvalByID(nil, done.EvalID)
	must.NoError(t, err)
	must.Nil(t, gone)
	a, err := st.AllocByID(nil, finishedAlloc.ID)
	must.NoError(t, err)
	must.Nil(t, a)

	kept, err := st.JobByID(nil, structs.DefaultNamespace, "still-running")
	must.NoError(t, err)
	must.NotNil(t, kept)
	ev, err := st.EvalByID(nil, running.EvalID)
	must.NoError(t, err)
	must.NotNil(t, ev)

	// A dev server then compacts its in-memory Raft log past the purge.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		snapIndex, err := strconv.ParseUint(s.raft.Stats()["last_snapshot_index"], 10, 64)
		return err == nil && snapIndex >= index
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)), must.Sprintf("no snapshot at or after the purge (index %d)", index))
}

// A client watching its allocs learns of a garbage-collected alloc at once,
// although a deletion raises no alloc's modify index.
func TestGetClientAllocs_WakesOnDeletion(t *testing.T) {
	s, node := serverWithNode(t)
	reg := registerJob(t, s, mockJob("watched"))
	waitEvalsTerminal(t, s, time.Minute)

	req := &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID}
	var first structs.NodeClientAllocsResponse
	must.NoError(t, s.RPC("Node.GetClientAllocs", req, &first))
	must.MapLen(t, 1, first.Allocs)
	var allocID string
	for id := range first.Allocs {
		allocID = id
	}

	got := make(chan structs.NodeClientAllocsResponse, 1)
	go func() {
		blocking := *req
		blocking.MinQueryIndex = first.Index
		blocking.MaxQueryTime = int64(time.Minute)
		var resp structs.NodeClientAllocsResponse
		_ = s.RPC("Node.GetClientAllocs", &blocking, &resp)
		got <- resp
	}()
	_, _, err := s.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: []string{reg.EvalID}, Allocs: []string{allocID}})
	must.NoError(t, err)

	select {
	case resp := <-got:
		must.MapEmpty(t, resp.Allocs)
		must.Greater(t, first.Index, resp.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the client's alloc watch did not wake on the deletion")
	}
}

// The eval GC collects each old terminal eval whose allocs are all
// terminal, with those allocs, and keeps an eval with a running alloc,
// telling apart the evals of one job by their allocs' EvalID (there is no
// eval index: it reads each job's allocs once).
func TestCoreScheduler_EvalGCByEvalWithinAJob(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)
	past := time.Now().Add(-time.Hour).UnixNano()
	eval := func(jobID string) *structs.Evaluation {
		return &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: structs.DefaultNamespace, JobID: jobID, Type: structs.JobTypeService,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: structs.EvalStatusComplete,
			CreateTime: past, ModifyTime: past,
		}
	}
	node := structs.GenerateUUID()
	alloc := func(e *structs.Evaluation, status string) *structs.Allocation {
		return &structs.Allocation{
			ID: structs.GenerateUUID(), Namespace: e.Namespace, JobID: e.JobID, EvalID: e.ID, NodeID: node,
			Name: e.JobID + ".web[0]", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: status, CreateTime: past, ModifyTime: past,
		}
	}
	done, running, empty, other := eval("web"), eval("web"), eval("web"), eval("api")
	gone := []*structs.Allocation{
		alloc(done, structs.AllocClientStatusComplete), alloc(done, structs.AllocClientStatusFailed),
		alloc(other, structs.AllocClientStatusComplete),
	}
	kept := alloc(running, structs.AllocClientStatusRunning)
	for _, id := range []string{"web", "api"} {
		_, _, err := s.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob(id)})
		must.NoError(t, err)
	}
	_, _, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done, running, empty, other}})
	must.NoError(t, err)
	_, _, err = s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: append([]*structs.Allocation{kept}, gone...)})
	must.NoError(t, err)

	snap, err := s.State().Snapshot()
	must.NoError(t, err)
	must.NoError(t, newCoreScheduler(s, snap).evalGC(0, 0))

	st := s.State()
	for _, e := range []*structs.Evaluation{done, empty, other} {
		got, err := st.EvalByID(nil, e.ID)
		must.NoError(t, err)
		must.Nil(t, got, must.Sprintf("eval of %s with no live alloc should be collected", e.JobID))
	}
	for _, a := range gone {
		got, err := st.AllocByID(nil, a.ID)
		must.NoError(t, err)
		must.Nil(t, got)
	}
	got, err := st.EvalByID(nil, running.ID)
	must.NoError(t, err)
	must.NotNil(t, got, must.Sprint("the eval with a running alloc stays"))
	a, err := st.AllocByID(nil, kept.ID)
	must.NoError(t, err)
	must.NotNil(t, a)
}
