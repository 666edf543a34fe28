package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestUpdateNodeDrain_LastDrain(t *testing.T) {
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Minute}}
	cases := []struct {
		name     string
		steps    func(s *StateStore, id string) error
		wantElig string
		wantLast string
		draining bool
	}{
		{
			name:     "setting a drain makes the node ineligible",
			steps:    func(s *StateStore, id string) error { return s.UpdateNodeDrain(2, id, drain, false, 100, nil, nil) },
			wantElig: structs.NodeSchedulingIneligible, wantLast: structs.DrainStatusDraining, draining: true,
		},
		{
			name: "an operator's cancel with MarkEligible",
			steps: func(s *StateStore, id string) error {
				if err := s.UpdateNodeDrain(2, id, drain, false, 100, nil, nil); err != nil {
					return err
				}
				return s.UpdateNodeDrain(3, id, nil, true, 200, nil, nil)
			},
			wantElig: structs.NodeSchedulingEligible, wantLast: structs.DrainStatusCanceled,
		},
		{
			name: "the drainer's completion keeps the node ineligible",
			steps: func(s *StateStore, id string) error {
				if err := s.UpdateNodeDrain(2, id, drain, false, 100, nil, nil); err != nil {
					return err
				}
				return s.CompleteNodeDrains(3, map[string]*structs.DrainUpdate{id: {}}, nil, 200)
			},
			wantElig: structs.NodeSchedulingIneligible, wantLast: structs.DrainStatusComplete,
		},
		{
			name: "a completion after a cancel changes nothing",
			steps: func(s *StateStore, id string) error {
				if err := s.UpdateNodeDrain(2, id, drain, false, 100, nil, nil); err != nil {
					return err
				}
				if err := s.UpdateNodeDrain(3, id, nil, true, 200, nil, nil); err != nil {
					return err
				}
				return s.CompleteNodeDrains(4, map[string]*structs.DrainUpdate{id: {}}, nil, 300)
			},
			wantElig: structs.NodeSchedulingEligible, wantLast: structs.DrainStatusCanceled,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testStore(t)
			node := mockNode()
			must.NoError(t, s.UpsertNode(1, node))
			must.NoError(t, c.steps(s, node.ID))
			got, err := s.NodeByID(nil, node.ID)
			must.NoError(t, err)
			must.Eq(t, c.wantElig, got.SchedulingEligibility)
			must.Eq(t, c.wantLast, got.LastDrain.Status)
			must.Eq(t, c.draining, got.DrainStrategy != nil)
			must.Eq(t, c.draining, got.Stub().Drain)
			if c.draining {
				must.False(t, got.Ready(), must.Sprint("a draining node takes no placements"))
			}
		})
	}
}

// A client re-registering (after a restart, say) knows nothing of the
// drain; the server keeps it.
func TestUpsertNode_KeepsDrain(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Minute}, ForceDeadline: time.Unix(160, 0).UTC()}
	must.NoError(t, s.UpdateNodeDrain(2, node.ID, drain, false, 100, nil, map[string]string{"why": "upgrade"}))

	again := mockNode()
	again.ID, again.SecretID = node.ID, node.SecretID
	must.NoError(t, s.UpsertNode(3, again))
	got, err := s.NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.NotNil(t, got.DrainStrategy)
	must.True(t, got.DrainStrategy.ForceDeadline.Equal(drain.ForceDeadline))
	must.Eq(t, map[string]string{"why": "upgrade"}, got.LastDrain.Meta)
	must.False(t, got.Ready())
}

func TestUpdateAllocsDesiredTransitions_DrainMarksMigrate(t *testing.T) {
	s := testStore(t)
	job := mockBatchJob("j")
	must.NoError(t, s.UpsertJob(1, job))
	node := mockNode()
	a := mockAlloc(job, node.ID, newID(), structs.AllocClientStatusRunning)
	must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{a}))
	eval := mockEval(job, structs.EvalStatusPending)

	must.NoError(t, s.UpdateAllocsDesiredTransitions(3, map[string]*structs.DesiredTransition{
		a.ID: {Migrate: new(true)},
	}, []*structs.Evaluation{eval}))
	got, err := s.AllocByID(nil, a.ID)
	must.NoError(t, err)
	must.True(t, got.DesiredTransition.ShouldMigrate())
	must.Eq(t, uint64(3), got.ModifyIndex)
	stored, err := s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.NotNil(t, stored, must.Sprint("the eval is written with the transition"))
}
