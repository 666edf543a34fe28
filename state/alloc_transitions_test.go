package state

import (
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

func TestUpdateAllocsDesiredTransitions(t *testing.T) {
	cases := []struct {
		name    string
		ids     func(known string) []string
		wantErr string
	}{
		{"known alloc", func(known string) []string { return []string{known} }, ""},
		{"an unknown alloc fails the whole write", func(known string) []string { return []string{known, "00000000-0000-4000-8000-000000000000"} }, `alloc "00000000-0000-4000-8000-000000000000": not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := mockJob("web")
			must.NoError(t, s.UpsertJob(1, job))
			alloc := mockAlloc(job, newID(), newID(), structs.AllocClientStatusRunning)
			alloc.DesiredTransition.Reschedule = new(true)
			must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{alloc}))
			eval := mockEval(job, structs.EvalStatusPending)
			transitions := map[string]*structs.DesiredTransition{}
			for _, id := range tc.ids(alloc.ID) {
				transitions[id] = &structs.DesiredTransition{Migrate: new(true), NoShutdownDelay: new(true)}
			}
			err := s.UpdateAllocsDesiredTransitions(3, transitions, []*structs.Evaluation{eval})
			got, gerr := s.AllocByID(nil, alloc.ID)
			must.NoError(t, gerr)
			storedEval, eerr := s.EvalByID(nil, eval.ID)
			must.NoError(t, eerr)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.False(t, got.DesiredTransition.ShouldMigrate())
				must.Nil(t, storedEval)
				must.Eq(t, uint64(2), got.ModifyIndex)
				return
			}
			must.NoError(t, err)
			must.True(t, got.DesiredTransition.ShouldMigrate())
			must.True(t, *got.DesiredTransition.NoShutdownDelay)
			// Fields the request leaves unset are kept.
			must.True(t, *got.DesiredTransition.Reschedule)
			must.Eq(t, uint64(3), got.ModifyIndex)
			must.NotNil(t, storedEval)
		})
	}
}
