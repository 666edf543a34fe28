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

func lastPeriodicLaunch(t *testing.T, s *Server, parent string) time.Time {
	t.Helper()
	l, err := s.State().PeriodicLaunchByID(nil, structs.DefaultNamespace, parent)
	must.NoError(t, err)
	must.NotNil(t, l)
	return time.Unix(0, l.Launch)
}

// The dispatcher is a leader loop of the real server: it launches through
// Raft while the server leads, ends with leadership and, in a new term,
// resumes after the launch stored in state. Its timing (on time, nothing
// while no server leads, one catch-up instead of a burst, overlap) is
// tested in fake time in periodic_test.go; here a cron that fires every
// second keeps the wall-clock waits to about a second each.
func TestPeriodicDispatcher_FollowsLeadership(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)

	job := mockJob("tick")
	job.Periodic = &structs.PeriodicConfig{Enabled: true, Specs: []string{"* * * * * * *"}}
	var reg structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg))
	must.Eq(t, "", reg.EvalID, must.Sprint("a periodic parent gets no eval of its own"))

	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(periodicChildren(t, s, "tick")) >= 1
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	child := periodicChildren(t, s, "tick")[0]
	must.Eq(t, "tick", child.ParentID)
	must.Nil(t, child.Periodic)
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, child.ID)
	must.NoError(t, err)
	must.SliceNotEmpty(t, evals)
	// The launch eval; the scheduler may add a blocked follow-up, as no
	// node is registered.
	first := evals[0]
	for _, e := range evals {
		if e.CreateIndex < first.CreateIndex {
			first = e
		}
	}
	must.Eq(t, structs.EvalTriggerPeriodicJob, first.TriggeredBy)

	// revokeLeadership returns once the leader loops, the dispatcher
	// among them, have ended.
	s.revokeLeadership()
	before := len(periodicChildren(t, s, "tick"))
	stored := lastPeriodicLaunch(t, s, "tick")

	s.establishLeadership()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(periodicChildren(t, s, "tick")) > before
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	must.True(t, lastPeriodicLaunch(t, s, "tick").After(stored), must.Sprint("the new term launches after the stored launch"))

	var force structs.PeriodicForceResponse
	must.NoError(t, s.RPC("Job.PeriodicForce", &structs.PeriodicForceRequest{JobID: "tick", WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &force))
	must.NotEq(t, "", force.EvalID)
	must.Positive(t, force.EvalCreateIndex)
	forced, err := s.State().EvalByID(nil, force.EvalID)
	must.NoError(t, err)
	must.NotNil(t, forced)
	forcedChild, err := s.State().JobByID(nil, structs.DefaultNamespace, forced.JobID)
	must.NoError(t, err)
	must.NotNil(t, forcedChild)
	must.Eq(t, "tick", forcedChild.ParentID)
}
