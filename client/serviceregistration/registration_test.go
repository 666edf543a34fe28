package serviceregistration

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func testAlloc() *structs.Allocation {
	return &structs.Allocation{
		ID:        "b4e61df9-b095-d64e-f241-23860da1375f",
		Namespace: "default",
		JobID:     "web",
		TaskGroup: "cache",
		NodeID:    "node-1",
		Job: &structs.Job{ID: "web", TaskGroups: []*structs.TaskGroup{{
			Name:     "cache",
			Services: []*structs.Service{{Name: "redis", PortLabel: "db", Provider: "nomad", Tags: []string{"a"}}},
			Tasks: []*structs.Task{
				{Name: "redis", Services: []*structs.Service{{Name: "redis-task", PortLabel: "http", Provider: "nomad"}}},
				{Name: "side"},
			},
		}}},
		AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
			Ports: []structs.AllocatedPortMapping{
				{Label: "db", Value: 25123, HostIP: "10.0.0.5"},
				{Label: "http", Value: 25124, To: 8080, HostIP: "10.0.0.5"},
			},
		}},
	}
}

func TestMakeAllocServiceID(t *testing.T) {
	a := testAlloc()
	s := a.Job.TaskGroups[0].Services[0]
	must.Eq(t, "_nomad-task-b4e61df9-b095-d64e-f241-23860da1375f-group-cache-redis-db", MakeAllocServiceID(a.ID, GroupOwner("cache"), s))
	ts := a.Job.TaskGroups[0].Tasks[0].Services[0]
	must.Eq(t, "_nomad-task-b4e61df9-b095-d64e-f241-23860da1375f-redis-redis-task-http", MakeAllocServiceID(a.ID, "redis", ts))
}

func TestResolve(t *testing.T) {
	n := NetworkOf(testAlloc(), "192.168.1.1")
	bridge := n
	bridge.Status = &structs.AllocNetworkStatus{Address: "172.26.64.9"}
	cases := []struct {
		name         string
		net          Network
		custom, mode string
		label        string
		addr         string
		port         int
		err          string
	}{
		{name: "auto label", net: n, mode: "auto", label: "db", addr: "10.0.0.5", port: 25123},
		{name: "empty mode", net: n, label: "http", addr: "10.0.0.5", port: 25124},
		{name: "host number", net: n, mode: "host", label: "9000", addr: "192.168.1.1", port: 9000},
		{name: "driver as host", net: n, mode: "driver", label: "db", addr: "10.0.0.5", port: 25123},
		{name: "custom address", net: n, custom: "example.com", label: "db", addr: "example.com", port: 25123},
		{name: "unknown label", net: n, mode: "host", label: "nope", err: `invalid port "nope"`},
		{name: "alloc without network", net: n, mode: "alloc", label: "http", err: `address_mode="alloc"`},
		{name: "alloc uses to", net: bridge, mode: "alloc", label: "http", addr: "172.26.64.9", port: 8080},
		{name: "alloc without to", net: bridge, mode: "alloc", label: "db", addr: "172.26.64.9", port: 25123},
		{name: "bad mode", net: n, mode: "weird", label: "db", err: `invalid address_mode "weird"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, port, err := Resolve(tc.net, tc.custom, tc.mode, tc.label)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.addr, addr)
			must.Eq(t, tc.port, port)
		})
	}
}

func TestBuild(t *testing.T) {
	a := testAlloc()
	node := &structs.Node{ID: "node-1", Datacenter: "dc1", Attributes: map[string]string{NodeAddressAttr: "192.168.1.1"}}
	regs, err := Build(a, node, "", GroupServices(a))
	must.NoError(t, err)
	must.Eq(t, []*structs.ServiceRegistration{{
		ID:          "_nomad-task-b4e61df9-b095-d64e-f241-23860da1375f-group-cache-redis-db",
		ServiceName: "redis", Namespace: "default", NodeID: "node-1", Datacenter: "dc1",
		JobID: "web", AllocID: a.ID, Tags: []string{"a"}, Address: "10.0.0.5", Port: 25123,
	}}, regs)

	bad := []*structs.Service{{Name: "x", PortLabel: "missing", Provider: "nomad"}, {Name: "y", PortLabel: "db", Provider: "nomad"}}
	regs, err = Build(a, node, "redis", bad)
	must.ErrorContains(t, err, `service "x": invalid port "missing"`)
	must.Len(t, 1, regs)
	must.Eq(t, "y", regs[0].ServiceName)
}
