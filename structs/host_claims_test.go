package structs

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestHostClaimCollision(t *testing.T) {
	withPorts := func(ports ...Port) *Allocation {
		nw := &NetworkResource{ReservedPorts: ports}
		var mapped []AllocatedPortMapping
		for _, p := range ports {
			mapped = append(mapped, AllocatedPortMapping{Label: p.Label, Value: p.Value})
		}
		return &Allocation{AllocatedResources: &AllocatedResources{Shared: AllocatedSharedResources{Networks: []*NetworkResource{nw}, Ports: mapped}}}
	}
	withCores := func(cores ...uint16) *Allocation {
		return &Allocation{AllocatedResources: &AllocatedResources{Tasks: map[string]*AllocatedTaskResources{"t": {Cpu: AllocatedCpuResources{ReservedCores: cores}}}}}
	}
	cases := []struct {
		name     string
		reserved []int
		allocs   []*Allocation
		want     string
	}{
		{"apart", nil, []*Allocation{withPorts(Port{Label: "a", Value: 20000}), withPorts(Port{Label: "a", Value: 20001})}, ""},
		{"same port", nil, []*Allocation{withPorts(Port{Label: "a", Value: 20000}), withPorts(Port{Label: "b", Value: 20000})}, "network: port 20000 collision"},
		{"node reserved", []int{22}, []*Allocation{withPorts(Port{Label: "ssh", Value: 22})}, "network: port 22 collision"},
		{"ignore_collision", nil, []*Allocation{withPorts(Port{Label: "a", Value: 53}), withPorts(Port{Label: "a", Value: 53, IgnoreCollision: true})}, ""},
		{"cores apart", nil, []*Allocation{withCores(0, 1), withCores(2)}, ""},
		{"same core", nil, []*Allocation{withCores(0, 1), withCores(1)}, "cores: core 1 collision"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, HostClaimCollision(tc.reserved, tc.allocs))
		})
	}
}

func TestNode_ReservedHostPorts(t *testing.T) {
	n := &Node{ReservedResources: &NodeReservedResources{Networks: NodeReservedNetworkResources{ReservedHostPorts: "22, 80,8000-8002"}}}
	must.Eq(t, []int{22, 80, 8000, 8001, 8002}, n.ReservedHostPorts())
	must.SliceEmpty(t, (&Node{}).ReservedHostPorts())
}
