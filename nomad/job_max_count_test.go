package nomad

import (
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// mustRefuse expects a 400 carrying msg, as the HTTP API answers it.
func mustRefuse(t *testing.T, err error, msg string) {
	t.Helper()
	code, got, ok := structs.CodeFromRPCCodedErr(err)
	must.True(t, ok, must.Sprintf("err: %v", err))
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, msg, got)
}

// job_max_count is checked wherever a job's counts are set: register,
// plan, scale and revert. A refused request writes nothing.
func TestJobMaxCount(t *testing.T) {
	s := testServer(t, func(c *Config) { c.JobMaxCount = 10 })
	waitForLeader(t, s)
	withCount := func(n int) *structs.Job {
		j := mockJob("app")
		j.TaskGroups[0].Count = n
		return j
	}
	stored := func() *structs.Job {
		t.Helper()
		job, err := s.State().JobByID(nil, "default", "app")
		must.NoError(t, err)
		return job
	}
	register(t, s, withCount(10), nil)
	before := stored()

	const over = `task group "work" count 11 is more than the server's job_max_count 10`
	var reg structs.JobRegisterResponse
	mustRefuse(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: withCount(11)}, &reg), over)
	var plan structs.JobPlanResponse
	mustRefuse(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: withCount(11)}, &plan), over)

	two := withCount(6)
	second := two.TaskGroups[0].Copy()
	second.Name, second.Count = "more", 5
	two.TaskGroups = append(two.TaskGroups, second)
	mustRefuse(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: two}, &reg),
		`total count of the job's task groups 11 is more than the server's job_max_count 10`)

	scale := func(n int64) error {
		var reply structs.JobRegisterResponse
		return s.RPC("Job.Scale", &structs.JobScaleRequest{JobID: "app", Target: map[string]string{structs.ScalingTargetGroup: "work"}, Count: &n}, &reply)
	}
	mustRefuse(t, scale(11), over)
	mustRefuse(t, scale(1<<31-1), `task group "work" count 2147483647 is more than the server's job_max_count 10`)
	after := stored()
	must.Eq(t, before.ModifyIndex, after.ModifyIndex)
	must.Eq(t, 10, after.TaskGroups[0].Count)
	var status structs.JobScaleStatusResponse
	must.NoError(t, s.RPC("Job.ScaleStatus", &structs.JobScaleStatusRequest{JobID: "app"}, &status))
	must.SliceEmpty(t, status.JobScaleStatus.TaskGroups["work"].Events)

	// Lowered below what the job asks for: scaling down is still
	// possible, scaling up and reverting to the larger version are not.
	s.config.JobMaxCount = 5
	must.NoError(t, scale(8))
	mustRefuse(t, scale(9), `task group "work" count 9 is more than the server's job_max_count 5`)
	var revert structs.JobRegisterResponse
	mustRefuse(t, s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "app", JobVersion: 0}, &revert),
		`task group "work" count 10 is more than the server's job_max_count 5`)
	must.Eq(t, 8, stored().TaskGroups[0].Count)

	// 0 is no limit.
	s.config.JobMaxCount = 0
	register(t, s, withCount(11), nil)
	must.Eq(t, 11, stored().TaskGroups[0].Count)
}
