package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestUpsertNode_Register(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	node.NodePool = ""
	must.NoError(t, s.UpsertNode(5, node))

	got, err := s.NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{5, 5}, []uint64{got.CreateIndex, got.ModifyIndex})
	must.Eq(t, structs.DefaultNodePool, got.NodePool)
	must.Eq(t, structs.NodeSchedulingEligible, got.SchedulingEligibility)

	bySecret, err := s.NodeBySecretID(nil, node.SecretID)
	must.NoError(t, err)
	must.Eq(t, node.ID, bySecret.ID)

	// The operator marks it ineligible; the client re-registers.
	must.NoError(t, s.UpdateNodeEligibility(6, node.ID, structs.NodeSchedulingIneligible, 100,
		&structs.NodeEvent{Message: "marked ineligible", Subsystem: "Cluster", Timestamp: time.Unix(100, 0)}))
	again := mockNode()
	again.ID, again.SecretID = node.ID, node.SecretID
	again.SchedulingEligibility = structs.NodeSchedulingEligible
	must.NoError(t, s.UpsertNode(7, again))
	got, err = s.NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{5, 7}, []uint64{got.CreateIndex, got.ModifyIndex})
	must.Eq(t, structs.NodeSchedulingIneligible, got.SchedulingEligibility)
	must.SliceLen(t, 1, got.Events)
	must.Eq(t, 6, got.Events[0].CreateIndex)

	pool, err := s.NodesByNodePool(nil, structs.DefaultNodePool)
	must.NoError(t, err)
	must.SliceLen(t, 1, pool)
	must.Eq(t, map[string]uint64{TableNodes: 7}, indexTable(t, s))
}

func TestUpdateNodeStatus(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))

	for i := range 12 {
		must.NoError(t, s.UpdateNodeStatus(uint64(2+i), node.ID, structs.NodeStatusDown, int64(1000+i),
			&structs.NodeEvent{Message: "heartbeat missed", Subsystem: "Cluster"}))
	}
	got, err := s.NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, structs.NodeStatusDown, got.Status)
	must.Eq(t, 1011, got.StatusUpdatedAt)
	must.Eq(t, 13, got.ModifyIndex)
	must.SliceLen(t, maxNodeEvents, got.Events)
	must.Eq(t, 13, got.Events[maxNodeEvents-1].CreateIndex)

	// The stored node a reader held before the update did not change.
	must.Eq(t, structs.NodeStatusReady, node.Status)
}

func TestNodeReads(t *testing.T) {
	s := testStore(t)
	a, b := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(1, a))
	must.NoError(t, s.UpsertNode(2, b))
	nodes, err := s.Nodes(nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, nodes)
	for _, prefix := range []string{a.ID[:1], a.ID[:4], a.ID[:9], a.ID} {
		got, err := s.NodesByIDPrefix(nil, prefix)
		must.NoError(t, err)
		must.SliceNotEmpty(t, got)
		for _, n := range got {
			must.StrHasPrefix(t, prefix, n.ID)
		}
	}
}

func TestNodeWrites_Errors(t *testing.T) {
	existing := mockNode()
	cases := []struct {
		name  string
		write func(s *StateStore) error
		want  string
	}{
		{"nil node", func(s *StateStore) error { return s.UpsertNode(2, nil) }, "upsert node: node is nil"},
		{"no secret", func(s *StateStore) error { n := mockNode(); n.SecretID = ""; return s.UpsertNode(2, n) }, "missing secret ID"},
		{"delete unknown among known", func(s *StateStore) error {
			return s.DeleteNode(2, []string{existing.ID, newID()})
		}, "not found"},
		{"bad status", func(s *StateStore) error {
			return s.UpdateNodeStatus(2, existing.ID, "sleepy", 0, nil)
		}, `status "sleepy" is not allowed`},
		{"bad eligibility", func(s *StateStore) error {
			return s.UpdateNodeEligibility(2, existing.ID, "maybe", 0, nil)
		}, `eligibility "maybe" is not allowed`},
		{"status of unknown node", func(s *StateStore) error {
			return s.UpdateNodeStatus(2, newID(), structs.NodeStatusDown, 0, nil)
		}, "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			n := *existing
			must.NoError(t, s.UpsertNode(1, &n))
			before := dumpState(t, &s.reader)
			must.ErrorContains(t, tc.write(s), tc.want)
			must.Eq(t, before, dumpState(t, &s.reader))
		})
	}
}

func TestDeleteNode(t *testing.T) {
	s := testStore(t)
	a, b := mockNode(), mockNode()
	must.NoError(t, s.UpsertNode(1, a))
	must.NoError(t, s.UpsertNode(2, b))
	must.NoError(t, s.DeleteNode(3, []string{a.ID, b.ID}))
	nodes, err := s.Nodes(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, nodes)
	must.Eq(t, map[string]uint64{TableNodes: 3}, indexTable(t, s))
}
