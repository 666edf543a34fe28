package nomad

import (
	"errors"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// setPause sets PauseEvalBroker, once the leader has written its default
// scheduler configuration (it does so as it establishes leadership).
func setPause(t *testing.T, s *Server, paused bool) {
	t.Helper()
	var cfg *structs.SchedulerConfiguration
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		_, c, err := s.State().SchedulerConfig()
		if err == nil && c == nil {
			err = errors.New("no scheduler configuration yet")
		}
		cfg = c
		return err
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	c := *cfg
	c.PauseEvalBroker = paused
	var reply structs.SchedulerSetConfigurationResponse
	must.NoError(t, s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: c}, &reply))
}

// PauseEvalBroker stops the leader's broker and blocked evals, survives a
// leadership change, and resuming hands the evals written meanwhile to
// the broker.
func TestEvalBrokerPause(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	// The leader enables its broker while it establishes leadership.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(s.evalBroker.Enabled),
		wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))

	setPause(t, s, true)
	must.False(t, s.evalBroker.Enabled())
	must.False(t, s.blockedEvals.Enabled())
	reg := register(t, s, mockJob("app"), nil)
	must.Eq(t, 0, s.evalBroker.Stats().TotalReady)

	s.revokeLeadership()
	s.establishLeadership()
	must.False(t, s.evalBroker.Enabled(), must.Sprint("a new leader keeps the broker paused"))

	setPause(t, s, false)
	must.True(t, s.evalBroker.Enabled())
	must.True(t, s.blockedEvals.Enabled())
	_, ok := s.evalBroker.Outstanding(reg.EvalID)
	must.False(t, ok)
	must.Eq(t, 1, s.evalBroker.Stats().TotalReady)
}

func TestEvalDelete(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	stopped := register(t, s, mockJob("stopped"), nil)
	var dereg structs.JobDeregisterResponse
	must.NoError(t, s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "stopped"}, &dereg))

	// A live job whose eval placed a running alloc.
	live := register(t, s, mockJob("live"), nil)
	node := registerNode(t, s)
	job, err := s.State().JobByID(nil, "default", "live")
	must.NoError(t, err)
	alloc := &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: "default", EvalID: live.EvalID, NodeID: node.ID, JobID: "live", Job: job,
		TaskGroup: "work", Name: "live.work[0]", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
	}
	_, _, err = s.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: job, EvalID: live.EvalID})
	must.NoError(t, err)

	del := func(args structs.EvalUserDeleteRequest) (int, error) {
		var reply structs.EvalDeleteResponse
		err := s.RPC("Eval.Delete", &args, &reply)
		return reply.Count, err
	}
	_, err = del(structs.EvalUserDeleteRequest{EvalIDs: []string{stopped.EvalID}})
	must.ErrorContains(t, err, "eval broker is enabled; eval broker must be paused to delete evals")

	setPause(t, s, true)
	cases := []struct {
		name  string
		args  structs.EvalUserDeleteRequest
		count int
		err   string
	}{
		{"nothing named", structs.EvalUserDeleteRequest{}, 0, "evals must be deleted by either ID or filter"},
		{"unknown", structs.EvalUserDeleteRequest{EvalIDs: []string{structs.GenerateUUID()}}, 0, "eval not found"},
		{"running alloc", structs.EvalUserDeleteRequest{EvalIDs: []string{live.EvalID}}, 0, "is not safe to delete"},
		{"one bad fails all", structs.EvalUserDeleteRequest{EvalIDs: []string{stopped.EvalID, live.EvalID}}, 0, "is not safe to delete"},
		{"filter skips the unsafe", structs.EvalUserDeleteRequest{EvalIDs: []string{live.EvalID, stopped.EvalID, structs.GenerateUUID()}, SkipUnsafe: true}, 1, ""},
		{"filter with nothing left", structs.EvalUserDeleteRequest{EvalIDs: []string{}, SkipUnsafe: true}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := del(tc.args)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.count, n)
		})
	}
	gone, err := s.State().EvalByID(nil, stopped.EvalID)
	must.NoError(t, err)
	must.Nil(t, gone)
	kept, err := s.State().EvalByID(nil, live.EvalID)
	must.NoError(t, err)
	must.NotNil(t, kept)
}
