package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func submission(src string) *structs.JobSubmission {
	return &structs.JobSubmission{Source: src, Format: "hcl2", VariableFlags: map[string]string{"v": src}}
}

func TestJobSubmission_PerVersion(t *testing.T) {
	cases := []struct {
		name   string
		writes []string // source per registration; "" sends none; each changes the spec
		want   map[uint64]string
	}{
		{"one per version", []string{"a", "b"}, map[uint64]string{0: "a", 1: "b"}},
		{"holes stay holes", []string{"a", "", "c"}, map[uint64]string{0: "a", 2: "c"}},
		{"kept as long as versions", []string{"0", "1", "2", "3", "4", "5", "6", "7"},
			map[uint64]string{2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			for i, src := range tc.writes {
				job := mockJob("web")
				job.TaskGroups[0].Count = i + 1
				var sub *structs.JobSubmission
				if src != "" {
					sub = submission(src)
				}
				must.NoError(t, s.UpsertJobWithSubmission(uint64(10+i), job, sub, nil))
			}
			for v := range uint64(len(tc.writes)) {
				got, err := s.JobSubmission(nil, "default", "web", v)
				must.NoError(t, err)
				want, ok := tc.want[v]
				if !ok {
					must.Nil(t, got, must.Sprintf("version %d", v))
					continue
				}
				must.NotNil(t, got, must.Sprintf("version %d", v))
				must.Eq(t, want, got.Source)
				must.Eq(t, v, got.Version)
				must.Eq(t, "web", got.JobID)
				must.Eq(t, uint64(10)+v, got.JobModifyIndex)
			}
		})
	}
}

func TestJobSubmission_UnchangedSpecKeepsFirstSource(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJobWithSubmission(1, mockJob("web"), submission("first"), nil))
	must.NoError(t, s.UpsertJobWithSubmission(2, mockJob("web"), submission("second"), nil))
	got, err := s.JobSubmission(nil, "default", "web", 0)
	must.NoError(t, err)
	must.Eq(t, "first", got.Source)
}

// Purging a job drops its sources and scaling history, and only its own:
// a job whose ID extends the purged one's keeps them. (Sources in another
// namespace are kept apart by the same key; the api module's
// TestJobs_Submission_namespaces covers that once namespaces exist.)
func TestJobSubmission_Purge(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJobWithSubmission(1, mockJob("web"), submission("default"), nil))
	must.NoError(t, s.UpsertJobWithSubmission(3, mockJob("webapp"), submission("longer id"), nil))
	must.NoError(t, s.UpsertScalingEvent(4, &structs.ScalingEventRequest{Namespace: "default", JobID: "web", TaskGroup: "web", ScalingEvent: &structs.ScalingEvent{Message: "m"}}))

	must.NoError(t, s.DeleteJob(5, "default", "web"))
	gone, err := s.JobSubmission(nil, "default", "web", 0)
	must.NoError(t, err)
	must.Nil(t, gone)
	events, _, err := s.ScalingEventsByJob(nil, "default", "web")
	must.NoError(t, err)
	must.Nil(t, events)
	got, err := s.JobSubmission(nil, "default", "webapp", 0)
	must.NoError(t, err)
	must.Eq(t, "longer id", got.Source)
	idx, err := s.Index(TableJobSubmission)
	must.NoError(t, err)
	must.Eq(t, uint64(5), idx)
}

func TestScalingEvents_NewestFirstAndCapped(t *testing.T) {
	s := testStore(t)
	for i := range structs.JobTrackedScalingEvents + 3 {
		must.NoError(t, s.UpsertScalingEvent(uint64(i+1), &structs.ScalingEventRequest{
			Namespace: "default", JobID: "web", TaskGroup: "web",
			ScalingEvent: &structs.ScalingEvent{PreviousCount: int64(i)},
		}))
	}
	must.NoError(t, s.UpsertScalingEvent(100, &structs.ScalingEventRequest{Namespace: "default", JobID: "web", TaskGroup: "db", ScalingEvent: &structs.ScalingEvent{}}))
	events, index, err := s.ScalingEventsByJob(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, uint64(100), index)
	must.Len(t, structs.JobTrackedScalingEvents, events["web"])
	must.Eq(t, int64(structs.JobTrackedScalingEvents+2), events["web"][0].PreviousCount)
	must.Eq(t, uint64(structs.JobTrackedScalingEvents+3), events["web"][0].CreateIndex)
	must.Len(t, 1, events["db"])

	err = s.UpsertScalingEvent(101, &structs.ScalingEventRequest{Namespace: "default", JobID: "web"})
	must.ErrorContains(t, err, "missing event")
}

func TestUpdateJobStability(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJob(1, mockJob("web")))
	changed := mockJob("web")
	changed.Priority = 70
	must.NoError(t, s.UpsertJob(2, changed))

	stable := func(version uint64) (bool, bool) {
		v, err := s.JobByIDAndVersion(nil, "default", "web", version)
		must.NoError(t, err)
		cur, err := s.JobByID(nil, "default", "web")
		must.NoError(t, err)
		return v.Stable, cur.Stable
	}

	must.NoError(t, s.UpdateJobStability(3, "default", "web", 0, true))
	v, cur := stable(0)
	must.True(t, v)
	must.False(t, cur, must.Sprint("an old version does not change the job"))

	must.NoError(t, s.UpdateJobStability(4, "default", "web", 1, true))
	v, cur = stable(1)
	must.True(t, v)
	must.True(t, cur)
	job, err := s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, uint64(4), job.ModifyIndex)
	must.Eq(t, uint64(2), job.JobModifyIndex)

	// Registering the same spec again keeps the flag.
	again := mockJob("web")
	again.Priority = 70
	must.NoError(t, s.UpsertJob(5, again))
	_, cur = stable(1)
	must.True(t, cur)

	err = s.UpdateJobStability(6, "default", "web", 9, true)
	must.ErrorIs(t, err, ErrNotFound)
}

func TestReconcileJobSummaries(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	node := mockNode()
	must.NoError(t, s.UpsertNode(2, node))
	running := mockAlloc(job, node.ID, "", structs.AllocClientStatusRunning)
	failed := mockAlloc(job, node.ID, "", structs.AllocClientStatusFailed)
	must.NoError(t, s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{running, failed}, Job: job}))
	parent := mockPeriodicJob("cron")
	must.NoError(t, s.UpsertJob(4, parent))
	must.NoError(t, s.UpsertJob(5, mockChildJob(parent, "a")))
	must.NoError(t, s.UpsertJob(6, mockChildJob(parent, "b")))

	want := map[string]*structs.JobSummary{}
	for _, id := range []string{"web", "cron"} {
		sum, err := s.JobSummaryByID(nil, "default", id)
		must.NoError(t, err)
		want[id] = sum
	}

	// Break both summaries the way a bug would, then reconcile.
	must.NoError(t, s.write(7, func(tx *writeTxn) error {
		for _, id := range []string{"web", "cron"} {
			broken := want[id].Copy()
			broken.Summary["web"] = structs.TaskGroupSummary{Running: 9, Queued: want[id].Summary["web"].Queued}
			if broken.Children != nil {
				broken.Children = &structs.JobChildrenSummary{Dead: 7}
			}
			if err := tx.putSummary(broken); err != nil {
				return err
			}
		}
		return nil
	}))
	must.NoError(t, s.ReconcileJobSummaries(8))
	for id, w := range want {
		got, err := s.JobSummaryByID(nil, "default", id)
		must.NoError(t, err)
		must.Eq(t, w.Summary, got.Summary, must.Sprintf("job %s", id))
		must.Eq(t, w.Children, got.Children, must.Sprintf("job %s", id))
		must.Eq(t, uint64(8), got.ModifyIndex)
	}
	must.Eq(t, structs.TaskGroupSummary{Starting: 0, Running: 1, Failed: 1}, want["web"].Summary["web"])
	must.Eq(t, &structs.JobChildrenSummary{Pending: 2}, want["cron"].Children)

	// Nothing to fix: nothing written.
	must.NoError(t, s.ReconcileJobSummaries(9))
	got, err := s.JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, uint64(8), got.ModifyIndex)
}
