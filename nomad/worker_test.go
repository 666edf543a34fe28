package nomad

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/nomad/planqueue"
	"github.com/nomadq/nomadq/structs"
)

// TestWorker_SubmitPlanEndsWithItsContext: a worker whose plan no applier
// will ever answer (the applier returned when leadership ended) must give
// up when its context does. Before, it waited forever, which kept the
// worker pool and so revokeLeadership and Server.Shutdown from returning.
func TestWorker_SubmitPlanEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broker, err := evalbroker.New(time.Minute, time.Second, time.Second, 3)
		must.NoError(t, err)
		q := planqueue.New()
		q.SetEnabled(true) // enabled, but no applier takes plans
		s := &Server{config: &Config{}, logger: hclog.NewNullLogger(), evalBroker: broker, planQueue: q}

		ctx, cancel := context.WithCancel(context.Background())
		w := s.newWorker(nil)
		w.ctx = ctx
		var done bool
		var submitErr error
		go func() {
			_, _, submitErr = w.SubmitPlan(&structs.Plan{EvalID: "eval", Priority: 50})
			done = true
		}()
		synctest.Wait()
		must.Eq(t, 1, q.Stats().Depth, must.Sprint("the plan is queued"))
		must.False(t, done, must.Sprint("SubmitPlan returned before its context ended"))

		cancel()
		synctest.Wait()
		must.True(t, done, must.Sprint("SubmitPlan still waiting after its context ended"))
		must.True(t, errors.Is(submitErr, context.Canceled), must.Sprintf("got %v", submitErr))
	})
}

// Each eval visits the nodes in its own shuffled order, as in Nomad: with
// every eval reading them in ID order, bin-packing put every one-alloc
// batch job on the first node of the cluster, however many there were.
func TestWorker_EvalsShuffleTheNodes(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = 10 * time.Minute })
	waitForLeader(t, s)
	const nodes, jobs = 20, 20
	for range nodes {
		var nr structs.NodeUpdateResponse
		must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nr))
	}
	for i := range jobs {
		var resp structs.JobRegisterResponse
		must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob(fmt.Sprintf("spread-%02d", i))}, &resp))
	}
	var used map[string]int
	must.Wait(t, wait.InitialSuccess(
		wait.BoolFunc(func() bool {
			allocs, err := s.State().Allocs(nil)
			must.NoError(t, err)
			used = map[string]int{}
			for _, a := range allocs {
				used[a.NodeID]++
			}
			return len(allocs) == jobs
		}),
		wait.Timeout(30*time.Second),
		wait.Gap(20*time.Millisecond),
	))
	// Each placement scores 5 of the 20 nodes and takes the fullest; all
	// 20 jobs on two nodes or fewer is about one chance in two million.
	must.Greater(t, 2, len(used), must.Sprintf("20 jobs on %d of %d nodes: %v", len(used), nodes, used))
}
