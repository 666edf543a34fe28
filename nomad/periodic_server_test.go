package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

func periodicChildren(t *testing.T, s *Server, parent string) []*structs.Job {
	t.Helper()
	jobs, err := s.State().JobsByIDPrefix(nil, structs.DefaultNamespace, parent+structs.PeriodicLaunchSuffix)
	must.NoError(t, err)
	return jobs
}

// The dispatcher is a leader duty: it launches while the server leads,
// stops with leadership and resumes from the stored launch when it comes
// back, with no burst for the launches missed in between.
func TestPeriodicDispatcher_FollowsLeadership(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)

	job := mockJob("tick")
	job.Periodic = &structs.PeriodicConfig{Enabled: true, Specs: []string{"* * * * * * *"}}
	var reg structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg))
	must.Eq(t, "", reg.EvalID)

	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(periodicChildren(t, s, "tick")) >= 2
	}), wait.Timeout(5*time.Second), wait.Gap(50*time.Millisecond)))
	child := periodicChildren(t, s, "tick")[0]
	must.Eq(t, "tick", child.ParentID)
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, child.ID)
	must.NoError(t, err)
	// The launch eval; the scheduler may add a blocked follow-up, as no
	// node is registered.
	first := evals[0]
	for _, e := range evals {
		if e.CreateIndex < first.CreateIndex {
			first = e
		}
	}
	must.Eq(t, structs.EvalTriggerPeriodicJob, first.TriggeredBy)

	s.revokeLeadership()
	before := len(periodicChildren(t, s, "tick"))
	time.Sleep(2500 * time.Millisecond) // two launches are missed
	must.Eq(t, before, len(periodicChildren(t, s, "tick")))

	s.establishLeadership()
	time.Sleep(300 * time.Millisecond)
	// At most one catch-up launch, plus possibly the launch of a second
	// that began during the 300 ms.
	after := len(periodicChildren(t, s, "tick"))
	must.Between(t, before+1, after, before+2)

	var force structs.PeriodicForceResponse
	must.NoError(t, s.RPC("Job.PeriodicForce", &structs.PeriodicForceRequest{JobID: "tick", WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &force))
	must.NotEq(t, "", force.EvalID)
	must.Positive(t, force.EvalCreateIndex)
}
