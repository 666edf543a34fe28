package scheduler

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestFeasibility_NetworkMode(t *testing.T) {
	withNetworks := func(modes ...string) func(int, *structs.Node) {
		return func(_ int, n *structs.Node) {
			for _, m := range modes {
				n.NodeResources.Networks = append(n.NodeResources.Networks, &structs.NetworkResource{Mode: m})
			}
		}
	}
	cases := []struct {
		name   string
		node   func(int, *structs.Node)
		mode   string
		placed int
	}{
		{"host needs nothing", nil, "host", 1},
		{"none needs nothing", nil, "none", 1},
		{"bridge on a bridge node", withNetworks("bridge"), "bridge", 1},
		{"bridge elsewhere", nil, "bridge", 0},
		{"cni network the node has", withNetworks("bridge", "cni/mynet"), "cni/mynet", 1},
		{"cni network the node lacks", withNetworks("bridge", "cni/other"), "cni/mynet", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(1, tc.node)
			job := mockJob("j", structs.JobTypeBatch, 1)
			job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: tc.mode, DynamicPorts: []structs.Port{{Label: "http", To: 8080}}}}
			h.State.upsertJob(job)
			h.run(job)
			must.Len(t, tc.placed, h.placed())
			if tc.placed == 0 {
				f := h.lastEval().FailedTGAllocs["work"]
				must.NotNil(t, f)
				must.Eq(t, map[string]int{"missing network": 1}, f.ConstraintFiltered)
				return
			}
			// The port keeps its "to" and the group network its mode, for
			// the client to forward and set up.
			for _, a := range h.placed() {
				must.Eq(t, 8080, a.AllocatedResources.Shared.Ports[0].To)
				must.Eq(t, tc.mode, a.AllocatedResources.Shared.Networks[0].Mode)
			}
		})
	}
}
