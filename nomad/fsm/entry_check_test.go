package fsm

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestApply_NilObjectsAreRefused: an entry that decodes but holds a nil
// object where the FSM writes one (msgpack's nil decodes without error)
// is answered with an error naming the field, on every server alike,
// instead of panicking the FSM.
func TestApply_NilObjectsAreRefused(t *testing.T) {
	cases := []struct {
		name string
		typ  structs.MessageType
		req  any
		err  string
	}{
		{"bootstrap without a token", structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{}, "Token is nil"},
		{"one-time token without a token", structs.OneTimeTokenUpsertRequestType, &structs.OneTimeTokenUpsertRequest{}, "OneTimeToken is nil"},
		{"nil eval in a list", structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{nil}}, "Evals[0] is nil"},
		{"nil alloc in a client update", structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{nil}}, "Alloc[0] is nil"},
		{"nil task group in a job", structs.JobRegisterRequestType, func() any {
			job := mockJob("nil-group")
			job.TaskGroups = append(job.TaskGroups, nil)
			return &structs.JobRegisterRequest{Job: job}
		}(), "Job.TaskGroups[1] is nil"},
		{"nil task in an alloc's job", structs.ApplyPlanResultsRequestType, func() any {
			_, job, _, alloc := fuzzBase()
			job.TaskGroups[0].Tasks = append(job.TaskGroups[0].Tasks, nil)
			alloc.Job = job
			return &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, EvalID: fuzzEvalID}
		}(), "AllocsUpdated[0].Job.TaskGroups[0].Tasks[1] is nil"},
		{"nil transition in a map", structs.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
			Allocs: map[string]*structs.DesiredTransition{fuzzAllocID: nil},
		}, "Allocs[" + fuzzAllocID + "] is nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := fuzzFSM(t)
			resp := apply(t, f, 10, tc.typ, tc.req)
			err, ok := resp.(error)
			must.True(t, ok, must.Sprintf("answer %#v", resp))
			must.ErrorContains(t, err, "fsm: decode "+tc.typ.String()+": "+tc.err)
		})
	}
}
