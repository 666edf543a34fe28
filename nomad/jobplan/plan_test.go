package jobplan

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/structs"
)

// TestAnnotate_CountsWhatThePlanDoes: a live alloc the plan keeps is an
// in-place update, one it stops for an update and replaces is a
// destructive update (its replacement is not a placement too), a plain
// stop (a count lowered by an update among them) is a stop, a new alloc a placement, and live allocs the plan
// leaves are ignored; terminal allocs count for nothing.
func TestAnnotate_CountsWhatThePlanDoes(t *testing.T) {
	job := mock.Job("web")
	alloc := func(id string, status string) *structs.Allocation {
		return &structs.Allocation{ID: id, TaskGroup: "work", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: status}
	}
	existing := []*structs.Allocation{
		alloc("kept", structs.AllocClientStatusRunning),
		alloc("replaced", structs.AllocClientStatusRunning),
		alloc("stopped", structs.AllocClientStatusRunning),
		alloc("left", structs.AllocClientStatusRunning),
		alloc("scaled-away", structs.AllocClientStatusRunning),
		alloc("done", structs.AllocClientStatusComplete),
	}
	replaced, stopped, scaledAway := existing[1].Copy(), existing[2].Copy(), existing[4].Copy()
	replaced.DesiredDescription = "alloc is being updated due to job update"
	stopped.DesiredDescription = "alloc not needed since job is stopped"
	// A count lowered by an update stops allocs: stops, not updates.
	scaledAway.DesiredDescription = "alloc not needed due to job update"
	plan := &structs.Plan{
		NodeUpdate: map[string][]*structs.Allocation{"n1": {replaced, stopped, scaledAway}},
		NodeAllocation: map[string][]*structs.Allocation{"n1": {
			existing[0].Copy(), alloc("replacement", structs.AllocClientStatusPending), alloc("new", structs.AllocClientStatusPending),
		}},
	}
	got := annotate(job, plan, existing).DesiredTGUpdates["work"]
	must.Eq(t, structs.DesiredUpdates{Place: 1, InPlaceUpdate: 1, DestructiveUpdate: 1, Stop: 2, Ignore: 1}, *got)
	must.Eq(t, map[string]uint64{"create": 1, "in-place update": 1, "create/destroy update": 1, "destroy": 2, "ignore": 1}, UpdatesByName(got))

	none := annotate(job, nil, nil)
	must.Eq(t, structs.DesiredUpdates{}, *none.DesiredTGUpdates["work"])
	must.MapEmpty(t, UpdatesByName(none.DesiredTGUpdates["work"]))
}
