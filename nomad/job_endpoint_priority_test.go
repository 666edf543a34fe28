package nomad

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// job_max_priority bounds a job's priority at register, plan and revert;
// job_default_priority is the priority of a job submitted without one.
// A refused request writes nothing.
func TestJobPriority_ServerConfig(t *testing.T) {
	s := testServer(t, func(c *Config) { c.JobMaxPriority, c.JobDefaultPriority = 200, 70 })
	waitForLeader(t, s)
	withPriority := func(id string, p int) *structs.Job {
		j := mockJob(id)
		j.Priority = p
		return j
	}
	stored := func(id string) *structs.Job {
		t.Helper()
		job, err := s.State().JobByID(nil, "default", id)
		must.NoError(t, err)
		return job
	}

	// No priority: the server's default, for the job and its eval.
	reply := register(t, s, withPriority("plain", 0), nil)
	must.Eq(t, 70, stored("plain").Priority)
	eval, err := s.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, 70, eval.Priority)
	var plan structs.JobPlanResponse
	must.NoError(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: withPriority("plain", 0), Diff: true}, &plan))
	must.Eq(t, structs.DiffTypeNone, plan.Diff.Type, must.Sprint("an unchanged job planned without a priority shows no diff"))

	// Up to the limit; above it is refused by register and plan.
	register(t, s, withPriority("app", 200), nil)
	must.Eq(t, 200, stored("app").Priority)
	before := stored("app").ModifyIndex
	const over = "job priority must be between [1, 200], got 201 (the server's job_max_priority is 200)"
	var reg structs.JobRegisterResponse
	mustRefuse(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: withPriority("app", 201)}, &reg), over)
	mustRefuse(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: withPriority("app", 201)}, &plan), over)
	must.Eq(t, before, stored("app").ModifyIndex)

	// Lowered below a stored version's priority: reverting to it is
	// refused.
	register(t, s, withPriority("app", 90), nil)
	s.config.JobMaxPriority = 100
	var revert structs.JobRegisterResponse
	mustRefuse(t, s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "app", JobVersion: 0}, &revert),
		"job priority must be between [1, 100], got 200 (the server's job_max_priority is 100)")
	must.Eq(t, 90, stored("app").Priority)
}

// Nomad's defaults: 50 for a job without a priority, 100 at most.
func TestJobPriority_Defaults(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	j := mockJob("plain")
	j.Priority = 0
	register(t, s, j, nil)
	job, err := s.State().JobByID(nil, "default", "plain")
	must.NoError(t, err)
	must.Eq(t, structs.JobDefaultPriority, job.Priority)

	j = mockJob("high")
	j.Priority = 101
	var reg structs.JobRegisterResponse
	mustRefuse(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: j}, &reg),
		"job priority must be between [1, 100], got 101 (the server's job_max_priority is 100)")
}
