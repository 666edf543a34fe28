package fsm

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/eventbroker"
	"github.com/nomadq/nomadq/structs"
)

// groupLogs encodes a stretch of a cluster's Raft log from index 1: runs
// of the entries the FSM group-commits (registrations, plans, client reports,
// eval updates) broken by others (a node's status, a configuration
// entry), and one registration the state refuses. With queue, the batch
// queue is switched on first, and holds the registrations' evals.
func groupLogs(t *testing.T, queue bool) []*raft.Log {
	t.Helper()
	node := mockNode("aaaaaaaa-0000-0000-0000-000000000001")
	var logs []*raft.Log
	add := func(typ structs.MessageType, msg any) {
		buf, err := structs.Encode(typ, msg)
		must.NoError(t, err)
		logs = append(logs, &raft.Log{Index: uint64(len(logs) + 1), Type: raft.LogCommand, Data: buf})
	}
	add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	if queue {
		cfg := structs.DefaultSchedulerConfiguration()
		cfg.BatchQueue = structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFIFO, ConcurrentPlacements: 2, WorkloadTimeout: time.Minute}
		add(structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: *cfg})
	}
	var jobs []*structs.Job
	var evals []*structs.Evaluation
	for i := range 6 {
		job := mockJob(fmt.Sprintf("job-%d", i))
		job.Canonicalize()
		eval := mock.JobEval(job)
		eval.ID = fmt.Sprintf("eeeeeeee-0000-0000-0000-%012d", i)
		jobs, evals = append(jobs, job), append(evals, eval)
		add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
	}
	orphan := mockJob("orphan")
	orphan.Namespace = "nowhere"
	add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: orphan})
	logs = append(logs, &raft.Log{Index: uint64(len(logs) + 1), Type: raft.LogConfiguration, Data: []byte{1, 2, 3}})
	var allocs []*structs.Allocation
	for i, job := range jobs {
		alloc := mock.Alloc(job, node, evals[i].ID)
		alloc.ID = fmt.Sprintf("aaaaaaaa-0000-0000-0000-%012d", i)
		alloc.CreateTime = 1700000000
		allocs = append(allocs, alloc)
		done := evals[i].Copy()
		done.Status = structs.EvalStatusComplete
		add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			AllocsUpdated: []*structs.Allocation{alloc}, Job: job, EvalID: evals[i].ID, Evals: []*structs.Evaluation{done}})
	}
	add(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusReady, UpdatedAt: 1700000001})
	for i, a := range allocs {
		status := structs.AllocClientStatusComplete
		if i%3 == 0 {
			status = structs.AllocClientStatusFailed
		}
		add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{
			ID: a.ID, NodeID: node.ID, ClientStatus: status, ModifyTime: 1700000002,
			TaskStates: map[string]*structs.TaskState{"main": {State: structs.TaskStateDead, Failed: status == structs.AllocClientStatusFailed}},
		}}})
	}
	blocked := mock.JobEval(jobs[0])
	blocked.ID = "bbbbbbbb-0000-0000-0000-000000000001"
	blocked.Status = structs.EvalStatusBlocked
	add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blocked}})
	return logs
}

// leaderFSM is testFSM with the broker, blocked evals and event stream on,
// as on the leader.
func leaderFSM(t *testing.T) (*FSM, *eventbroker.Subscription) {
	f := testFSM(t)
	f.broker.SetEnabled(true)
	f.blocked.SetEnabled(true)
	b := eventbroker.New(1000)
	f.SetEventBroker(b)
	return f, b.Subscribe(eventbroker.SubscribeRequest{Topics: map[structs.Topic][]string{"*": {"*"}}, Namespace: "*"})
}

type eventSeen struct {
	Index     uint64
	Topic     structs.Topic
	Type, Key string
}

func drainEvents(t *testing.T, sub *eventbroker.Subscription) []eventSeen {
	var out []eventSeen
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		evs, err := sub.Next(ctx)
		cancel()
		if err != nil {
			return out
		}
		for _, e := range evs.Events {
			out = append(out, eventSeen{Index: evs.Index, Topic: e.Topic, Type: e.Type, Key: e.Key})
		}
	}
}

// TestFSM_ApplyBatchSameAsOneByOne applies the same log one entry at a
// time and through ApplyBatch, whole and in uneven slices, and requires
// the same answers, state, events, broker and blocked evals. The run
// with the refused registration falls back to one entry at a time; the
// others share a transaction.
func TestFSM_ApplyBatchSameAsOneByOne(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run(fmt.Sprintf("queue %v", queue), func(t *testing.T) { testApplyBatchSame(t, queue) })
	}
}

func testApplyBatchSame(t *testing.T, queue bool) {
	logs := groupLogs(t, queue)
	want, wantSub := leaderFSM(t)
	var wantResp []any
	for _, l := range logs {
		var resp any
		if l.Type == raft.LogCommand {
			resp = want.Apply(l)
		}
		wantResp = append(wantResp, resp)
	}
	wantEvents := drainEvents(t, wantSub)
	must.SliceNotEmpty(t, wantEvents)
	if queue {
		must.SliceLen(t, 6, mustQueueEntries(t, want), must.Sprint("the queue holds the six registrations"))
	} else {
		must.Eq(t, 6, want.broker.Stats().TotalReady, must.Sprint("the broker has the six registrations' evals"))
	}

	for _, slices := range [][]int{{len(logs)}, {3, 5, 1, 7, 100}, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}} {
		t.Run(fmt.Sprint(slices), func(t *testing.T) {
			got, gotSub := leaderFSM(t)
			var gotResp []any
			rest := logs
			for _, n := range slices {
				n = min(n, len(rest))
				gotResp = append(gotResp, got.ApplyBatch(rest[:n])...)
				rest = rest[n:]
			}
			must.SliceEmpty(t, rest)
			must.Eq(t, fmt.Sprint(wantResp), fmt.Sprint(gotResp))
			if len(slices) == 1 {
				must.Eq(t, 1, got.groupFallbacks.Load(), must.Sprint("the run with the refused registration"))
			}
			must.Greater(t, 0, got.groupedEntries.Load())

			a, b := want.State(), got.State()
			mustSameJobsAndEvals(t, a, b, "jobs", "job_version", "job_summary", "evals", "allocs", "nodes")
			allocsA, _ := a.Allocs(nil)
			allocsB, _ := b.Allocs(nil)
			must.Eq(t, allocsA, allocsB)
			must.Eq(t, mustQueueEntries(t, want), mustQueueEntries(t, got))
			sumA, _ := a.JobSummaries(nil)
			sumB, _ := b.JobSummaries(nil)
			must.Eq(t, sumA, sumB)

			must.Eq(t, wantEvents, drainEvents(t, gotSub))
			must.Eq(t, want.broker.Stats().TotalReady, got.broker.Stats().TotalReady)
			must.Eq(t, want.blocked.Stats(), got.blocked.Stats())
		})
	}
}

func mustQueueEntries(t *testing.T, f *FSM) []*structs.BatchQueueEntry {
	t.Helper()
	entries, err := f.State().BatchQueueEntries(nil)
	must.NoError(t, err)
	return entries
}

// TestFSM_QueuedEvalsNeverReachTheBroker: with the batch queue on, the
// evals of batch registrations wait in the queue, whether their entries
// are applied one by one or group-committed, and so does a queued eval
// written again (an eval update); a service job's eval goes to the
// broker. The FSM takes where each eval goes from the state write that
// stored it.
func TestFSM_QueuedEvalsNeverReachTheBroker(t *testing.T) {
	encode := func(index uint64, typ structs.MessageType, msg any) *raft.Log {
		buf, err := structs.Encode(typ, msg)
		must.NoError(t, err)
		return &raft.Log{Index: index, Type: raft.LogCommand, Data: buf}
	}
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprintf("grouped %v", grouped), func(t *testing.T) {
			f, _ := leaderFSM(t)
			cfg := structs.DefaultSchedulerConfiguration()
			cfg.BatchQueue = structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFIFO, ConcurrentPlacements: 2, WorkloadTimeout: time.Minute}
			mustApply(t, f, 1, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: *cfg})

			var logs []*raft.Log
			var queued []*structs.Evaluation
			for i := range 3 {
				job := mockJob(fmt.Sprintf("batch-%d", i))
				job.Canonicalize()
				eval := mock.JobEval(job)
				queued = append(queued, eval)
				logs = append(logs, encode(uint64(2+i), structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval}))
			}
			web := mockJob("web")
			web.Type = structs.JobTypeService
			web.Canonicalize()
			webEval := mock.JobEval(web)
			logs = append(logs,
				encode(5, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: web, Eval: webEval}),
				encode(6, structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{queued[0].Copy()}}))
			if grouped {
				for _, resp := range f.ApplyBatch(logs) {
					must.Nil(t, resp)
				}
				must.Eq(t, int64(len(logs)), f.groupedEntries.Load())
			} else {
				for _, l := range logs {
					must.Nil(t, f.Apply(l))
				}
			}

			must.SliceLen(t, 3, mustQueueEntries(t, f))
			must.Eq(t, 1, f.broker.Stats().TotalReady, must.Sprint("only the service job's eval"))
			got, _, err := f.broker.Dequeue([]string{structs.JobTypeBatch, structs.JobTypeService}, time.Second)
			must.NoError(t, err)
			must.Eq(t, webEval.ID, got.ID)
		})
	}
}
