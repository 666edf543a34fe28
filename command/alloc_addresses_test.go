package command

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestFormatAllocAddresses(t *testing.T) {
	withPorts := &api.Allocation{AllocatedResources: &api.AllocatedResources{Shared: api.AllocatedSharedResources{
		Networks: []*api.NetworkResource{{
			Mode:          "host",
			IP:            "10.0.0.7",
			ReservedPorts: []api.Port{{Label: "admin", Value: 8080}},
			DynamicPorts:  []api.Port{{Label: "http", Value: 20000}},
		}},
		Ports: []api.PortMapping{
			{Label: "admin", Value: 8080, HostIP: "10.0.0.7"},
			{Label: "http", Value: 20000, HostIP: "10.0.0.7"},
		},
	}}}
	cases := []struct {
		name  string
		alloc *api.Allocation
		want  string
	}{
		{"no network", &api.Allocation{AllocatedResources: &api.AllocatedResources{}}, ""},
		{"ports", withPorts, "Allocation Addresses (mode = \"host\"):\n" +
			"Label   Dynamic  Address\n" +
			"*admin  no       10.0.0.7:8080\n" +
			"*http   yes      10.0.0.7:20000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, formatAllocAddresses(tc.alloc))
		})
	}
}
