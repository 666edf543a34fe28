package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestSummary_EntryPerGroup(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	summary, err := s.JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, &structs.JobSummary{
		JobID:       "web",
		Namespace:   "default",
		Summary:     map[string]structs.TaskGroupSummary{"web": {}},
		CreateIndex: 1,
		ModifyIndex: 1,
	}, summary)

	// A new group gets an entry; an unchanged job leaves the summary alone.
	must.NoError(t, s.UpsertJob(2, mockJob("web")))
	two := mockJob("web")
	two.TaskGroups = append(two.TaskGroups, &structs.TaskGroup{Name: "db", Count: 1})
	must.NoError(t, s.UpsertJob(3, two))
	summary, err = s.JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.MapContainsKeys(t, summary.Summary, []string{"web", "db"})
	must.Eq(t, []uint64{1, 3}, []uint64{summary.CreateIndex, summary.ModifyIndex})

	all, err := s.JobSummaries(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, all)
}

func TestSummary_AllocStatusMoves(t *testing.T) {
	type step struct {
		status string
		want   structs.TaskGroupSummary
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"pending running complete", []step{
			{structs.AllocClientStatusRunning, structs.TaskGroupSummary{Running: 1}},
			{structs.AllocClientStatusComplete, structs.TaskGroupSummary{Complete: 1}},
		}},
		{"pending failed", []step{
			{structs.AllocClientStatusFailed, structs.TaskGroupSummary{Failed: 1}},
		}},
		{"running unknown running lost", []step{
			{structs.AllocClientStatusRunning, structs.TaskGroupSummary{Running: 1}},
			{structs.AllocClientStatusUnknown, structs.TaskGroupSummary{Unknown: 1}},
			{structs.AllocClientStatusRunning, structs.TaskGroupSummary{Running: 1}},
			{structs.AllocClientStatusLost, structs.TaskGroupSummary{Lost: 1}},
		}},
		{"same status twice counts once", []step{
			{structs.AllocClientStatusRunning, structs.TaskGroupSummary{Running: 1}},
			{structs.AllocClientStatusRunning, structs.TaskGroupSummary{Running: 1}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := mockJob("web")
			must.NoError(t, s.UpsertJob(1, job))
			alloc := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
			other := mockAlloc(job, newID(), newID(), structs.AllocClientStatusRunning)
			must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{alloc}))
			must.Eq(t, structs.TaskGroupSummary{Starting: 1}, groupSummary(t, s, job, "web"))
			must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{other}))

			for i, st := range tc.steps {
				must.NoError(t, s.UpdateAllocsFromClient(uint64(10+i), []*structs.Allocation{clientUpdate(alloc, st.status)}))
				want := st.want
				want.Running++ // the other alloc
				must.Eq(t, want, groupSummary(t, s, job, "web"), must.Sprintf("after step %d (%s)", i, st.status))
			}
		})
	}
}

func TestSummary_LostFromPlan(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	alloc := mockAlloc(job, newID(), newID(), structs.AllocClientStatusRunning)
	must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{alloc}))

	plan := &structs.Plan{}
	plan.AppendStoppedAlloc(alloc, "alloc is lost since its node is down", structs.AllocClientStatusLost)
	must.NoError(t, s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{AllocsStopped: plan.NodeUpdate[alloc.NodeID]}))
	must.Eq(t, structs.TaskGroupSummary{Lost: 1}, groupSummary(t, s, job, "web"))

	// A stale plan copy does not revive a finished alloc.
	done := mockAlloc(job, newID(), newID(), structs.AllocClientStatusRunning)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{done}))
	stale := *done
	must.NoError(t, s.UpdateAllocsFromClient(5, []*structs.Allocation{clientUpdate(done, structs.AllocClientStatusComplete)}))
	plan = &structs.Plan{}
	plan.AppendStoppedAlloc(&stale, "stopped", "")
	must.NoError(t, s.UpsertPlanResults(6, &structs.ApplyPlanResultsRequest{AllocsStopped: plan.NodeUpdate[done.NodeID]}))
	got, err := s.AllocByID(nil, done.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocClientStatusComplete, got.ClientStatus)
	must.Eq(t, structs.TaskGroupSummary{Lost: 1, Complete: 1}, groupSummary(t, s, job, "web"))
}

func TestSummary_QueuedFromEvals(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))

	eval := mockEval(job, structs.EvalStatusBlocked)
	eval.QueuedAllocations = map[string]int{"web": 2, "gone": 7}
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{eval}))
	must.Eq(t, structs.TaskGroupSummary{Queued: 2}, groupSummary(t, s, job, "web"))
	summary, err := s.JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.MapNotContainsKey(t, summary.Summary, "gone")

	// A placement takes one from the queue until the next eval says more.
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{mockAlloc(job, newID(), eval.ID, structs.AllocClientStatusPending)}))
	must.Eq(t, structs.TaskGroupSummary{Queued: 1, Starting: 1}, groupSummary(t, s, job, "web"))

	next := mockEval(job, structs.EvalStatusComplete)
	next.QueuedAllocations = map[string]int{"web": 0}
	must.NoError(t, s.UpsertEvals(4, []*structs.Evaluation{next}))
	must.Eq(t, structs.TaskGroupSummary{Starting: 1}, groupSummary(t, s, job, "web"))
	summary, err = s.JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, 4, summary.ModifyIndex)
}
