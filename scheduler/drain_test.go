package scheduler

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// An allocation the drainer marked for migration is stopped and replaced
// on another node; its neighbour on the draining node, not yet marked,
// keeps running, and nothing lands on the draining node.
func TestMigrate_MarkedAllocsMoveOffDrainingNode(t *testing.T) {
	for _, typ := range []string{structs.JobTypeBatch, structs.JobTypeService} {
		t.Run(typ, func(t *testing.T) {
			h := newHarness(t)
			nodes := h.addNodes(2, nil)
			job := mockJob("j", typ, 2)
			h.State.upsertJob(job)
			h.run(job)
			h.pinRunning(nodes[0])
			var marked *structs.Allocation
			for _, a := range h.State.allocs {
				if a.Name == "j.work[0]" {
					a.DesiredTransition.Migrate = new(true)
					marked = a
				}
			}
			nodes[0].DrainStrategy = &structs.DrainStrategy{}
			nodes[0].SchedulingEligibility = structs.NodeSchedulingIneligible
			h.Plans = nil
			h.run(job)

			stopped := h.stopped()
			must.Eq(t, []string{"j.work[0]"}, names(stopped))
			must.Eq(t, descMigrating, stopped[0].DesiredDescription)
			placed := h.placed()
			must.Eq(t, []string{"j.work[0]"}, names(placed))
			must.Eq(t, nodes[1].ID, placed[0].NodeID)
			must.Eq(t, marked.ID, placed[0].PreviousAllocation)
			must.Nil(t, placed[0].RescheduleTracker, must.Sprint("a migration takes no reschedule attempt"))
		})
	}
}

// A draining or ineligible node takes no new placement, whatever the
// scheduler.
func TestFeasibility_SkipsDrainingAndIneligibleNodes(t *testing.T) {
	cases := []struct {
		name string
		mod  func(n *structs.Node)
	}{
		{"draining", func(n *structs.Node) { n.DrainStrategy = &structs.DrainStrategy{} }},
		{"ineligible", func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible }},
	}
	for _, c := range cases {
		for _, typ := range []string{structs.JobTypeBatch, structs.JobTypeService, structs.JobTypeSystem, structs.JobTypeSysBatch} {
			t.Run(c.name+"/"+typ, func(t *testing.T) {
				h := newHarness(t)
				nodes := h.addNodes(2, func(i int, n *structs.Node) {
					if i == 0 {
						c.mod(n)
					}
				})
				job := mockJob("j", typ, 2)
				h.State.upsertJob(job)
				h.run(job)
				for _, a := range h.placed() {
					must.NotEq(t, nodes[0].ID, a.NodeID)
				}
				must.SliceNotEmpty(t, h.placed())
			})
		}
	}
}

// A system allocation marked for migration stops, and the draining node
// gets no new one.
func TestSystem_MigratedAllocStops(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(2, nil)
	job := mockJob("sys", structs.JobTypeSystem, 1)
	h.State.upsertJob(job)
	h.run(job)
	for _, a := range h.State.allocs {
		a.ClientStatus = structs.AllocClientStatusRunning
		if a.NodeID == nodes[0].ID {
			a.DesiredTransition.Migrate = new(true)
		}
	}
	nodes[0].DrainStrategy = &structs.DrainStrategy{}
	nodes[0].SchedulingEligibility = structs.NodeSchedulingIneligible
	h.Plans = nil
	h.run(job)
	stopped := h.stopped()
	must.Len(t, 1, stopped)
	must.Eq(t, nodes[0].ID, stopped[0].NodeID)
	must.Eq(t, descMigrating, stopped[0].DesiredDescription)
	must.SliceEmpty(t, h.placed())
}
