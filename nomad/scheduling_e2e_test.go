package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// waitEvalsTerminal blocks (watching the evals table, no polling) until
// every eval is terminal, and returns them.
func waitEvalsTerminal(t *testing.T, s *Server, timeout time.Duration) []*structs.Evaluation {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var index uint64
	for {
		var resp structs.EvalListResponse
		req := &structs.EvalListRequest{QueryOptions: structs.QueryOptions{
			MinQueryIndex: index, MaxQueryTime: int64(5 * time.Second),
		}}
		must.NoError(t, s.RPC("Eval.List", req, &resp))
		index = resp.Index
		pending := 0
		for _, e := range resp.Evaluations {
			if !e.TerminalStatus() && e.Status != structs.EvalStatusBlocked {
				pending++
			}
		}
		if pending == 0 && len(resp.Evaluations) > 0 {
			return resp.Evaluations
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d evals still not terminal after %s", pending, timeout)
		}
	}
}

// One process, mock nodes (no client): 1,000 single-alloc batch jobs on
// 100 nodes are each placed exactly once and their summaries agree.
func TestScheduling_ThousandBatchJobsOnHundredNodes(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.NumSchedulers = 2
		c.MinHeartbeatTTL = 10 * time.Minute // the mock nodes never heartbeat
	})
	waitForLeader(t, s)

	for range 100 {
		var resp structs.NodeUpdateResponse
		must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &resp))
	}
	const jobs = 1000
	for i := range jobs {
		registerJob(t, s, mockJob(fmt.Sprintf("batch-%04d", i)))
	}

	evals := waitEvalsTerminal(t, s, 2*time.Minute)
	for _, e := range evals {
		must.Eq(t, structs.EvalStatusComplete, e.Status, must.Sprintf("eval %s of %s: %s", e.ID, e.JobID, e.StatusDescription))
		must.MapEmpty(t, e.FailedTGAllocs)
	}

	st := s.State()
	allocs, err := st.Allocs(nil)
	must.NoError(t, err)
	must.Len(t, jobs, allocs)
	perJob := map[string]int{}
	perNode := map[string]int{}
	for _, a := range allocs {
		perJob[a.JobID]++
		perNode[a.NodeID]++
		must.Eq(t, structs.AllocDesiredStatusRun, a.DesiredStatus)
		must.Positive(t, a.CreateTime)
	}
	must.MapLen(t, jobs, perJob)
	for id, n := range perJob {
		must.Eq(t, 1, n, must.Sprintf("job %s has %d allocs", id, n))
	}
	// 100 MHz each on 4000 MHz nodes: no node can hold more than 40.
	for node, n := range perNode {
		must.LessEq(t, 40, n, must.Sprintf("node %s holds %d allocs", node, n))
	}
	// Each eval's verdict went in with its plan: one Raft entry placed
	// the alloc and completed the eval.
	allocOf := make(map[string]*structs.Allocation, len(allocs))
	for _, a := range allocs {
		allocOf[a.EvalID] = a
	}
	for _, e := range evals {
		a := allocOf[e.ID]
		must.NotNil(t, a, must.Sprintf("eval %s placed nothing", e.ID))
		must.Eq(t, a.CreateIndex, e.ModifyIndex, must.Sprintf("eval %s completed at %d, its alloc placed at %d", e.ID, e.ModifyIndex, a.CreateIndex))
	}

	for i := range jobs {
		id := fmt.Sprintf("batch-%04d", i)
		sum, err := st.JobSummaryByID(nil, structs.DefaultNamespace, id)
		must.NoError(t, err)
		must.Eq(t, structs.TaskGroupSummary{Starting: 1}, sum.Summary["work"], must.Sprintf("summary of %s", id))
		job, err := st.JobByID(nil, structs.DefaultNamespace, id)
		must.NoError(t, err)
		must.Eq(t, structs.JobStatusRunning, job.Status)
	}
}

// A job too big for any node gets a blocked eval whose metrics say it is
// infeasible, and is placed once a node that fits registers.
func TestScheduling_BlockedUntilCapacityArrives(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)

	var nr structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nr))

	big := mockJob("big")
	big.TaskGroups[0].Tasks[0].Resources.MemoryMB = 16 * 1024
	resp := registerJob(t, s, big)
	waitEvalsTerminal(t, s, time.Minute)

	var er structs.SingleEvalResponse
	must.NoError(t, s.RPC("Eval.Get", &structs.EvalSpecificRequest{EvalID: resp.EvalID}, &er))
	must.Eq(t, structs.EvalStatusComplete, er.Eval.Status)
	metric := er.Eval.FailedTGAllocs["work"]
	must.NotNil(t, metric)
	must.True(t, metric.Infeasible)
	must.StrContains(t, metric.InfeasibleReason, "resources exceed every node's capacity")
	must.NotEq(t, "", er.Eval.BlockedEval)

	bigNode := mockNode(structs.GenerateUUID())
	bigNode.NodeResources.Memory.MemoryMB = 32 * 1024
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: bigNode}, &nr))

	// The blocked eval is unblocked by the new node and places the job.
	var index uint64
	deadline := time.Now().Add(time.Minute)
	for {
		var ar structs.JobAllocationsResponse
		must.NoError(t, s.RPC("Job.Allocations", &structs.JobSpecificRequest{
			JobID: "big", QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: int64(5 * time.Second)},
		}, &ar))
		index = ar.Index
		if len(ar.Allocations) == 1 {
			must.Eq(t, bigNode.ID, ar.Allocations[0].NodeID)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("blocked job was not placed after a big enough node joined")
		}
	}
}
