package taskrunner

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

func TestFormatCPUSet(t *testing.T) {
	cases := []struct {
		cores []uint16
		want  string
	}{
		{nil, ""},
		{[]uint16{3}, "3"},
		{[]uint16{2, 0, 1}, "0-2"},
		{[]uint16{0, 1, 2, 5, 7, 8}, "0-2,5,7-8"},
	}
	for _, tc := range cases {
		must.Eq(t, tc.want, formatCPUSet(tc.cores))
	}
}

func TestAddResourceEnv(t *testing.T) {
	a := &structs.Allocation{AllocatedResources: &structs.AllocatedResources{
		Tasks: map[string]*structs.AllocatedTaskResources{"web": {
			Cpu:    structs.AllocatedCpuResources{CpuShares: 2000, ReservedCores: []uint16{1, 2}},
			Memory: structs.AllocatedMemoryResources{MemoryMB: 256, MemoryMaxMB: 512},
		}},
		Shared: structs.AllocatedSharedResources{Ports: []structs.AllocatedPortMapping{{Label: "http", Value: 20001, HostIP: "10.0.0.7"}}},
	}}
	env := map[string]string{}
	addResourceEnv(env, a, "web")
	must.Eq(t, map[string]string{
		"NOMAD_CPU_LIMIT":        "2000",
		"NOMAD_CPU_CORES":        "1-2",
		"NOMAD_MEMORY_LIMIT":     "256",
		"NOMAD_MEMORY_MAX_LIMIT": "512",
		"NOMAD_IP_http":          "10.0.0.7",
		"NOMAD_HOST_IP_http":     "10.0.0.7",
		"NOMAD_ADDR_http":        "10.0.0.7:20001",
		"NOMAD_HOST_ADDR_http":   "10.0.0.7:20001",
		"NOMAD_PORT_http":        "20001",
		"NOMAD_HOST_PORT_http":   "20001",
		"NOMAD_ALLOC_PORT_http":  "20001",
	}, env)
}

func TestTaskMounts(t *testing.T) {
	job := &structs.Job{TaskGroups: []*structs.TaskGroup{{
		Name:    "g",
		Volumes: map[string]*structs.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
	}}}
	alloc := &structs.Allocation{Job: job, TaskGroup: "g"}
	task := &structs.Task{Name: "t", VolumeMounts: []*structs.VolumeMount{{Volume: "data", Destination: "/data"}}}
	cases := []struct {
		name    string
		node    *structs.Node
		want    []*drivers.Mount
		wantErr string
	}{
		{"writable", &structs.Node{HostVolumes: map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared"}}},
			[]*drivers.Mount{{Volume: "data", HostPath: "/srv/shared", TaskPath: "/data"}}, ""},
		{"read-only on the node", &structs.Node{HostVolumes: map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: "/srv/shared", ReadOnly: true}}},
			[]*drivers.Mount{{Volume: "data", HostPath: "/srv/shared", TaskPath: "/data", ReadOnly: true}}, ""},
		{"gone from the node", &structs.Node{}, nil, `volume "data": host volume "shared" is not configured on this node`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskMounts(alloc, task, tc.node)
			if tc.wantErr != "" {
				must.EqError(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
			must.Eq(t, map[string]string{"NOMAD_VOLUME_data": "/data"}, volumeEnv(got, true))
			must.Eq(t, map[string]string{"NOMAD_VOLUME_data": "/srv/shared"}, volumeEnv(got, false))
		})
	}
}
