package scheduler

import (
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// An alloc marked to migrate (`nomad alloc stop`) is stopped and placed
// again: for service and batch jobs as a linked replacement with the same
// name, for system jobs on the same node.
func TestMigrate_StopsAndReplaces(t *testing.T) {
	cases := []struct {
		typ       string
		count     int
		sameNode  bool
		linksPrev bool
	}{
		{structs.JobTypeService, 2, false, true},
		{structs.JobTypeBatch, 2, false, true},
		{structs.JobTypeSystem, 1, true, false},
		{structs.JobTypeSysBatch, 1, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(2, nil)
			job := mockJob("j", tc.typ, tc.count)
			h.State.upsertJob(job)
			h.run(job)
			live := h.liveAllocs(job)
			must.Len(t, 2, live)
			for _, a := range live {
				a.ClientStatus = structs.AllocClientStatusRunning
			}
			target := live[0]
			target.DesiredTransition.Migrate = new(true)

			h.Plans = nil
			h.run(job)
			stopped := h.stopped()
			must.Len(t, 1, stopped)
			must.Eq(t, target.ID, stopped[0].ID)
			must.Eq(t, descMigrating, stopped[0].DesiredDescription)
			placed := h.placed()
			must.Len(t, 1, placed)
			must.Eq(t, target.Name, placed[0].Name)
			if tc.sameNode {
				must.Eq(t, target.NodeID, placed[0].NodeID)
			}
			if tc.linksPrev {
				must.Eq(t, target.ID, placed[0].PreviousAllocation)
			}
			must.Len(t, 2, h.liveAllocs(job))
		})
	}
}
