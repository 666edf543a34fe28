package nomad

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func register(t *testing.T, s *Server, job *structs.Job, sub *structs.JobSubmission) *structs.JobRegisterResponse {
	t.Helper()
	var reply structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, Submission: sub}, &reply))
	return &reply
}

func TestJobRevert(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	register(t, s, mockJob("app"), &structs.JobSubmission{Source: "v0 source", Format: "hcl2"})
	changed := mockJob("app")
	changed.Meta = map[string]string{"v": "1"}
	register(t, s, changed, nil)

	cases := []struct {
		name    string
		version uint64
		enforce *uint64
		err     string
		code    int
	}{
		{"current", 1, nil, `job "app" is already at version 1`, http.StatusBadRequest},
		{"unknown version", 5, nil, `job "app" in namespace "default" at version 5 not found`, http.StatusNotFound},
		{"wrong prior version", 0, new(uint64(3)), "Current job has version 1; enforcing version 3", http.StatusBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.JobRegisterResponse
			err := s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "app", JobVersion: tc.version, EnforcePriorVersion: tc.enforce}, &reply)
			must.ErrorContains(t, err, tc.err)
			// A caller's mistake is coded, so HTTP answers it as a 4xx.
			code, _, ok := structs.CodeFromRPCCodedErr(err)
			must.True(t, ok, must.Sprintf("uncoded error %v", err))
			must.Eq(t, tc.code, code)
		})
	}
	var reply structs.JobRegisterResponse
	err := s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "missing"}, &reply)
	must.ErrorContains(t, err, `job "missing" not found`)

	must.NoError(t, s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "app", JobVersion: 0, EnforcePriorVersion: new(uint64(1))}, &reply))
	must.NotEq(t, "", reply.EvalID)
	job, err := s.State().JobByID(nil, "default", "app")
	must.NoError(t, err)
	must.Eq(t, uint64(2), job.Version)
	must.MapEmpty(t, job.Meta)
	must.False(t, job.Stable)
	eval, err := s.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, job.JobModifyIndex, eval.JobModifyIndex)
	sub, err := s.State().JobSubmission(nil, "default", "app", 2)
	must.NoError(t, err)
	must.Eq(t, "v0 source", sub.Source)
}

func TestJobStable(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	register(t, s, mockJob("app"), nil)

	var reply structs.JobStabilityResponse
	must.ErrorContains(t, s.RPC("Job.Stable", &structs.JobStabilityRequest{JobID: "app", JobVersion: 3, Stable: true}, &reply), "at version 3 not found")
	must.NoError(t, s.RPC("Job.Stable", &structs.JobStabilityRequest{JobID: "app", JobVersion: 0, Stable: true}, &reply))
	must.Positive(t, reply.Index)
	job, err := s.State().JobByID(nil, "default", "app")
	must.NoError(t, err)
	must.True(t, job.Stable)
	must.NoError(t, s.RPC("Job.Stable", &structs.JobStabilityRequest{JobID: "app", JobVersion: 0, Stable: false}, &reply))
	job, err = s.State().JobByID(nil, "default", "app")
	must.NoError(t, err)
	must.False(t, job.Stable)
}

func TestValidateScale(t *testing.T) {
	target := func(job, group string) map[string]string {
		return map[string]string{structs.ScalingTargetJob: job, structs.ScalingTargetGroup: group}
	}
	cases := []struct {
		name string
		args structs.JobScaleRequest
		code int
		err  string
	}{
		{"ok", structs.JobScaleRequest{JobID: "j", Target: target("j", "g"), Count: new(int64(3))}, 0, ""},
		{"event only", structs.JobScaleRequest{JobID: "j", Target: target("", "g"), Error: true}, 0, ""},
		{"no job", structs.JobScaleRequest{Target: target("", "g"), Count: new(int64(1))}, 400, "missing job ID"},
		{"no group", structs.JobScaleRequest{JobID: "j", Target: target("j", ""), Count: new(int64(1))}, 400, "missing task group name"},
		{"job mismatch", structs.JobScaleRequest{JobID: "j", Target: target("k", "g")}, 400, "job ID in payload did not match URL"},
		{"namespace mismatch", structs.JobScaleRequest{JobID: "j", Target: map[string]string{structs.ScalingTargetNamespace: "other", structs.ScalingTargetGroup: "g"}}, 400, `"other" is not "default"`},
		{"negative", structs.JobScaleRequest{JobID: "j", Target: target("j", "g"), Count: new(int64(-1))}, 400, "can't be negative"},
		{"count with error", structs.JobScaleRequest{JobID: "j", Target: target("j", "g"), Count: new(int64(1)), Error: true}, 400, "should not contain count if error is true"},
		{"too large", structs.JobScaleRequest{JobID: "j", Target: target("j", "g"), Count: new(int64(1) << 40)}, 400, "too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validateScale(&tc.args, "default")
			if tc.err == "" {
				must.NoError(t, err)
				return
			}
			code, msg, ok := structs.CodeFromRPCCodedErr(err)
			must.True(t, ok)
			must.Eq(t, tc.code, code)
			must.StrContains(t, msg, tc.err)
		})
	}
}

func TestJobScale(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	reg := register(t, s, mockJob("app"), nil)
	sys := mockJob("sys")
	sys.Type = structs.JobTypeSystem
	sys.TaskGroups[0].MaxRunDuration = nil
	register(t, s, sys, nil)

	scale := func(job, group string, count *int64) (*structs.JobRegisterResponse, error) {
		var reply structs.JobRegisterResponse
		err := s.RPC("Job.Scale", &structs.JobScaleRequest{JobID: job, Target: map[string]string{structs.ScalingTargetGroup: group}, Count: count, Message: "m"}, &reply)
		return &reply, err
	}
	errs := []struct {
		name, job, group string
		count            *int64
		code             int
	}{
		{"no job", "nope", "work", new(int64(1)), http.StatusNotFound},
		{"no group", "app", "nope", new(int64(1)), http.StatusBadRequest},
		{"system above one", "sys", "work", new(int64(2)), http.StatusBadRequest},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scale(tc.job, tc.group, tc.count)
			code, _, ok := structs.CodeFromRPCCodedErr(err)
			must.True(t, ok, must.Sprintf("err: %v", err))
			must.Eq(t, tc.code, code)
		})
	}

	reply, err := scale("app", "work", new(int64(4)))
	must.NoError(t, err)
	must.Greater(t, reg.JobModifyIndex, reply.JobModifyIndex)
	job, err := s.State().JobByID(nil, "default", "app")
	must.NoError(t, err)
	must.Eq(t, 4, job.TaskGroups[0].Count)
	must.Eq(t, uint64(1), job.Version)
	eval, err := s.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalTriggerScaling, eval.TriggeredBy)
	must.Eq(t, job.JobModifyIndex, eval.JobModifyIndex)

	// The same count again changes nothing but still evaluates.
	again, err := scale("app", "work", new(int64(4)))
	must.NoError(t, err)
	must.Eq(t, reply.JobModifyIndex, again.JobModifyIndex)

	var status structs.JobScaleStatusResponse
	must.NoError(t, s.RPC("Job.ScaleStatus", &structs.JobScaleStatusRequest{JobID: "app"}, &status))
	must.Eq(t, 4, status.JobScaleStatus.TaskGroups["work"].Desired)
	events := status.JobScaleStatus.TaskGroups["work"].Events
	must.Len(t, 2, events)
	must.Eq(t, int64(4), events[0].PreviousCount)
	must.Eq(t, int64(1), events[1].PreviousCount)
	must.Eq(t, reply.EvalID, *events[1].EvalID)

	must.NoError(t, s.RPC("Job.ScaleStatus", &structs.JobScaleStatusRequest{JobID: "nope"}, &status))
	must.Nil(t, status.JobScaleStatus)
}

// A source above Nomad's default job_max_source_size is dropped with a
// warning; the job is registered all the same.
func TestJobRegister_OversizedSubmission(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	cases := []struct {
		name   string
		sub    *structs.JobSubmission
		kept   bool
		warned string
	}{
		{"at the limit", &structs.JobSubmission{Source: strings.Repeat("x", jobMaxSourceSize-2), VariableFlags: map[string]string{"a": "b"}}, true, ""},
		{"over the limit", &structs.JobSubmission{Source: strings.Repeat("x", jobMaxSourceSize-2), Variables: "v", VariableFlags: map[string]string{"a": "b"}}, false,
			"job source size of 1000001 bytes exceeds maximum of 1000000 bytes and will be discarded"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("big-%d", i)
			reply := register(t, s, mockJob(id), tc.sub)
			must.Eq(t, tc.warned, reply.Warnings)
			job, err := s.State().JobByID(nil, "default", id)
			must.NoError(t, err)
			must.NotNil(t, job)
			sub, err := s.State().JobSubmission(nil, "default", id, 0)
			must.NoError(t, err)
			must.Eq(t, tc.kept, sub != nil)
		})
	}
}
