package batchqueue

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Only ready, eligible, non-draining nodes count as room the queue may
// reserve.
func TestReadCluster_CountsOnlySchedulableNodes(t *testing.T) {
	cases := []struct {
		name string
		mod  func(n *structs.Node)
		want int64
	}{
		{"ready and eligible", func(*structs.Node) {}, 4000},
		{"ineligible", func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible }, 0},
		{"draining", func(n *structs.Node) { n.DrainStrategy = &structs.DrainStrategy{} }, 0},
		{"down", func(n *structs.Node) { n.Status = structs.NodeStatusDown }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := state.NewStateStore()
			must.NoError(t, err)
			id := structs.GenerateUUID()
			n := &structs.Node{
				ID: id, SecretID: id, Name: "n", Datacenter: "dc1",
				NodeResources: &structs.NodeResources{
					Cpu:    structs.NodeCpuResources{CpuShares: 4000},
					Memory: structs.NodeMemoryResources{MemoryMB: 8192},
				},
				Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
			}
			c.mod(n)
			must.NoError(t, st.UpsertNode(1, n))
			snap, err := st.Snapshot()
			must.NoError(t, err)
			cl, _, err := ReadCluster(snap)
			must.NoError(t, err)
			must.Eq(t, c.want, cl.Total.CPU)
		})
	}
}
