package state

import (
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// Snapshots of one version of the nodes table share one node list and
// map; a node write makes a new one, an older snapshot still reads its
// own version without replacing the newer one, and a restored store has
// a cache of its own.
func TestNodeSet_SharedPerVersionOfTheNodesTable(t *testing.T) {
	s := testStore(t)
	a, b := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(2, a))
	old, err := s.Snapshot()
	must.NoError(t, err)
	nodes1, byID1, err := old.NodeSet()
	must.NoError(t, err)
	must.Len(t, 1, nodes1)
	must.Eq(t, a, byID1[a.ID])

	// A write elsewhere leaves the nodes table, and so the set, as it was.
	must.NoError(t, s.UpsertJob(3, mockJob("unrelated")))
	snap2, err := s.Snapshot()
	must.NoError(t, err)
	nodes2, byID2, err := snap2.NodeSet()
	must.NoError(t, err)
	must.True(t, &nodes1[0] == &nodes2[0], must.Sprint("the same version is served from the cache"))
	must.MapLen(t, 1, byID2)

	must.NoError(t, s.UpsertNode(4, b))
	snap3, err := s.Snapshot()
	must.NoError(t, err)
	nodes3, byID3, err := snap3.NodeSet()
	must.NoError(t, err)
	must.Len(t, 2, nodes3)
	must.Eq(t, b, byID3[b.ID])

	// The older snapshot still sees one node, and the newer set stays.
	nodesOld, _, err := old.NodeSet()
	must.NoError(t, err)
	must.Len(t, 1, nodesOld)
	again, _, err := snap3.NodeSet()
	must.NoError(t, err)
	must.True(t, &nodes3[0] == &again[0])

	restored := restoreCopy(t, s)
	rs, err := restored.Snapshot()
	must.NoError(t, err)
	nodesR, _, err := rs.NodeSet()
	must.NoError(t, err)
	must.Len(t, 2, nodesR)
	must.False(t, &nodesR[0] == &nodes3[0], must.Sprint("a restored store builds its own"))

	// No nodes at all is an empty list, not an error.
	empty, err := testStore(t).Snapshot()
	must.NoError(t, err)
	none, byNone, err := empty.NodeSet()
	must.NoError(t, err)
	must.SliceEmpty(t, none)
	must.MapEmpty(t, byNone)
}

// The ready counts by pool and datacenter follow the nodes table's
// versions as the node set does.
func TestReadyNodeCounts_PerVersionOfTheNodesTable(t *testing.T) {
	s := testStore(t)
	node := func(pool, dc string, ready bool) *structs.Node {
		n := mockNode()
		n.NodePool, n.Datacenter = pool, dc
		n.SchedulingEligibility = structs.NodeSchedulingEligible
		if !ready {
			n.SchedulingEligibility = structs.NodeSchedulingIneligible
		}
		return n
	}
	must.NoError(t, s.UpsertNode(2, node("", "dc1", true)))
	must.NoError(t, s.UpsertNode(3, node("default", "dc1", true)))
	must.NoError(t, s.UpsertNode(4, node("gpu", "dc2", true)))
	must.NoError(t, s.UpsertNode(5, node("gpu", "dc2", false)))
	old, err := s.Snapshot()
	must.NoError(t, err)
	counts, err := old.ReadyNodeCounts()
	must.NoError(t, err)
	want := map[string]map[string]int{"default": {"dc1": 2}, "gpu": {"dc2": 1}}
	must.Eq(t, want, counts)
	again, err := old.ReadyNodeCounts()
	must.NoError(t, err)
	counts["marker"] = nil
	must.MapContainsKey(t, again, "marker", must.Sprint("the same version is served from the cache"))
	delete(counts, "marker")

	must.NoError(t, s.UpsertNode(6, node("gpu", "dc3", true)))
	snap, err := s.Snapshot()
	must.NoError(t, err)
	newer, err := snap.ReadyNodeCounts()
	must.NoError(t, err)
	must.Eq(t, map[string]map[string]int{"default": {"dc1": 2}, "gpu": {"dc2": 1, "dc3": 1}}, newer)
	// The older snapshot still counts its own version.
	older, err := old.ReadyNodeCounts()
	must.NoError(t, err)
	must.Eq(t, want, older)
}
