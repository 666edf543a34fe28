package scheduler

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// A plan whose placements all found a node carries the eval's verdict,
// and once the applier has written it with the plan, the scheduler writes
// no status of its own.
func TestOutcome_VerdictRidesWithAFullPlan(t *testing.T) {
	h := newHarness(t)
	h.WriteEvalUpdate = true
	h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 3)
	h.State.upsertJob(job)
	e := h.run(job)

	must.SliceLen(t, 1, h.Plans)
	must.True(t, h.Results[0].EvalUpdated)
	must.SliceEmpty(t, h.Updated, must.Sprint("the verdict went with the plan; a second write is one Raft entry too many"))
	must.SliceLen(t, 1, h.WithPlan)
	v := h.WithPlan[0]
	must.Eq(t, e.ID, v.ID)
	must.Eq(t, structs.EvalStatusComplete, v.Status)
	must.Eq(t, map[string]int{"work": 0}, v.QueuedAllocations)
	must.MapEmpty(t, v.FailedTGAllocs)
	must.Eq(t, "", v.BlockedEval)
}

// With a placement that found no node the plan carries no verdict: the
// scheduler creates the blocked eval first, then writes the verdict that
// names it.
func TestOutcome_NoVerdictWithAFailedPlacement(t *testing.T) {
	h := newHarness(t)
	h.WriteEvalUpdate = true
	h.addNodes(1, nil)
	job := mockJob("j", structs.JobTypeBatch, 20) // 500 MHz each on a 4,000 MHz node: 8 fit
	h.State.upsertJob(job)
	h.run(job)

	must.SliceLen(t, 1, h.Plans)
	must.Nil(t, h.Plans[0].EvalUpdate)
	must.SliceEmpty(t, h.WithPlan)
	v := h.lastEval()
	must.Eq(t, structs.EvalStatusComplete, v.Status)
	must.MapContainsKey(t, v.FailedTGAllocs, "work")
	must.SliceLen(t, 1, h.Created)
	must.Eq(t, h.Created[0].ID, v.BlockedEval)
}

// A plan committed only in part leaves the eval as it was; the verdict
// comes from a later attempt (here: the scheduler gives up).
func TestOutcome_NoVerdictWithAPartialCommit(t *testing.T) {
	h := newHarness(t)
	h.WriteEvalUpdate = true
	h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 2)
	h.State.upsertJob(job)
	h.RejectAll = true
	h.run(job)

	must.NotNil(t, h.Plans[0].EvalUpdate, must.Sprint("the plan offered its verdict"))
	for _, r := range h.Results {
		must.False(t, r.EvalUpdated)
	}
	must.SliceEmpty(t, h.WithPlan)
	must.Eq(t, structs.EvalStatusFailed, h.lastEval().Status)
}
