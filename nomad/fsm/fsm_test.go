package fsm

import (
	"bytes"
	"io"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

func TestFSM_AppliesEveryMessageType(t *testing.T) {
	f := testFSM(t)
	st := func() interface{ LatestIndex() (uint64, error) } { return f.State() }

	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 1, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	got, err := f.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, uint64(1), got.CreateIndex)

	mustApply(t, f, 2, structs.NodeUpdateEligibilityRequestType, &structs.NodeUpdateEligibilityRequest{
		NodeID: node.ID, Eligibility: structs.NodeSchedulingIneligible,
	})
	got, _ = f.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeSchedulingIneligible, got.SchedulingEligibility)

	job := mockJob("fsm-job")
	job.Canonicalize()
	eval := mock.JobEval(job)
	mustApply(t, f, 3, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
	storedJob, err := f.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, uint64(3), storedJob.JobModifyIndex)
	storedEval, err := f.State().EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, uint64(3), storedEval.JobModifyIndex, must.Sprint("the eval is written in the job's entry"))

	alloc := mock.Alloc(storedJob, node, eval.ID)
	done := storedEval.Copy()
	done.Status = structs.EvalStatusComplete
	mustApply(t, f, 4, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{alloc}, Job: storedJob, EvalID: eval.ID, Evals: []*structs.Evaluation{done},
	})
	storedAlloc, err := f.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, uint64(4), storedAlloc.CreateIndex)

	running := storedAlloc.Copy()
	running.ClientStatus = structs.AllocClientStatusRunning
	mustApply(t, f, 5, structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{running}})
	storedAlloc, _ = f.State().AllocByID(nil, alloc.ID)
	must.Eq(t, structs.AllocClientStatusRunning, storedAlloc.ClientStatus)
	storedJob, _ = f.State().JobByID(nil, job.Namespace, job.ID)
	must.Eq(t, structs.JobStatusRunning, storedJob.Status)

	mustApply(t, f, 6, structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
		NodeID: node.ID, Status: structs.NodeStatusDown, Evals: []*structs.Evaluation{{
			ID: structs.GenerateUUID(), Namespace: job.Namespace, Type: job.Type, Priority: job.Priority,
			TriggeredBy: structs.EvalTriggerNodeUpdate, JobID: job.ID, NodeID: node.ID, Status: structs.EvalStatusPending,
		}},
	})
	got, _ = f.State().NodeByID(nil, node.ID)
	must.Eq(t, structs.NodeStatusDown, got.Status)
	evals, err := f.State().EvalsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Len(t, 2, evals)

	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	mustApply(t, f, 7, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: *cfg})
	idx, storedCfg, err := f.State().SchedulerConfig()
	must.NoError(t, err)
	must.Eq(t, uint64(7), idx)
	must.True(t, storedCfg.BatchQueue.Enabled)

	// A check-and-set with a stale index changes nothing and says so.
	stale := *cfg
	stale.ModifyIndex = 1
	stale.BatchQueue.Enabled = false
	must.Eq[any](t, false, apply(t, f, 8, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: stale, CAS: true}))
	_, storedCfg, _ = f.State().SchedulerConfig()
	must.True(t, storedCfg.BatchQueue.Enabled)

	extra := mock.JobEval(job)
	extra.Status = structs.EvalStatusComplete
	mustApply(t, f, 9, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{extra}})
	mustApply(t, f, 10, structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: []string{extra.ID}})
	gone, err := f.State().EvalByID(nil, extra.ID)
	must.NoError(t, err)
	must.Nil(t, gone)

	mustApply(t, f, 11, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: job.ID, WriteRequest: structs.WriteRequest{Namespace: job.Namespace}})
	storedJob, _ = f.State().JobByID(nil, job.Namespace, job.ID)
	must.True(t, storedJob.Stop)

	mustApply(t, f, 12, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: job.ID, Purge: true, WriteRequest: structs.WriteRequest{Namespace: job.Namespace}})
	storedJob, _ = f.State().JobByID(nil, job.Namespace, job.ID)
	must.Nil(t, storedJob)

	mustApply(t, f, 13, structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}})
	got, _ = f.State().NodeByID(nil, node.ID)
	must.Nil(t, got)

	latest, err := st().LatestIndex()
	must.NoError(t, err)
	must.Eq(t, uint64(13), latest)
}

func TestFSM_SnapshotRestoreRoundTrip(t *testing.T) {
	f := testFSM(t)
	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 1, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	for i, id := range []string{"a", "b", "c"} {
		job := mockJob(id)
		job.Canonicalize()
		eval := mock.JobEval(job)
		mustApply(t, f, uint64(2+2*i), structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
		stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
		mustApply(t, f, uint64(3+2*i), structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			AllocsUpdated: []*structs.Allocation{mock.Alloc(stored, node, eval.ID)}, Job: stored, EvalID: eval.ID,
		})
	}
	cfg := structs.DefaultSchedulerConfiguration()
	mustApply(t, f, 20, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: *cfg})

	snap, err := f.Snapshot()
	must.NoError(t, err)
	var sink memSink
	must.NoError(t, snap.Persist(&sink))
	must.False(t, sink.canceled)

	restored := testFSM(t)
	oldStore := restored.State()
	must.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

	// The old store was abandoned, waking its blocking queries.
	select {
	case <-oldStore.AbandonCh():
	default:
		t.Fatal("restore did not abandon the replaced store")
	}

	src, dst := f.State(), restored.State()
	mustSameJobsAndEvals(t, src, dst, "jobs", "evals", "allocs", "nodes", "job_summary", "scheduler_config")
	allocsA, _ := src.Allocs(nil)
	allocsB, _ := dst.Allocs(nil)
	must.Len(t, 3, allocsB)
	for i := range allocsA {
		must.Eq(t, allocsA[i].ID, allocsB[i].ID)
		must.Eq(t, allocsA[i].CreateTime, allocsB[i].CreateTime)
		must.Eq(t, allocsA[i].Job.ID, allocsB[i].Job.ID)
	}
	nodesA, _ := src.Nodes(nil)
	nodesB, _ := dst.Nodes(nil)
	must.Eq(t, nodesA, nodesB)
}

// mustSameJobsAndEvals requires two stores to hold the same jobs and
// evals, and the same index for each of tables.
func mustSameJobsAndEvals(t *testing.T, a, b *state.StateStore, tables ...string) {
	t.Helper()
	for _, table := range tables {
		ia, err := a.Index(table)
		must.NoError(t, err)
		ib, err := b.Index(table)
		must.NoError(t, err)
		must.Eq(t, ia, ib, must.Sprintf("index of %s", table))
	}
	jobsA, err := a.Jobs(nil)
	must.NoError(t, err)
	jobsB, err := b.Jobs(nil)
	must.NoError(t, err)
	must.Eq(t, jobsA, jobsB)
	evalsA, err := a.Evals(nil)
	must.NoError(t, err)
	evalsB, err := b.Evals(nil)
	must.NoError(t, err)
	must.Eq(t, evalsA, evalsB)
}
