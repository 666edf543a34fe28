package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestFingerprintNetworkAndVolumes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	must.NoError(t, os.WriteFile(file, nil, 0o644))
	cases := []struct {
		name    string
		cfg     Config
		check   func(t *testing.T, n *structs.Node)
		wantErr string
	}{
		{
			name: "advertised address, range and volumes",
			cfg: Config{AdvertiseIP: "10.1.2.3", MinDynamicPort: 21000, MaxDynamicPort: 21010,
				HostVolumes: []*structs.ClientHostVolumeConfig{{Name: "shared", Path: dir, ReadOnly: true}}},
			check: func(t *testing.T, n *structs.Node) {
				must.Eq(t, []*structs.NetworkResource{{Mode: "host", IP: "10.1.2.3", CIDR: "10.1.2.3/32"}}, n.NodeResources.Networks)
				must.Eq(t, 21000, n.NodeResources.MinDynamicPort)
				must.Eq(t, 21010, n.NodeResources.MaxDynamicPort)
				must.Eq(t, map[string]*structs.ClientHostVolumeConfig{"shared": {Name: "shared", Path: dir, ReadOnly: true}}, n.HostVolumes)
				must.Eq(t, "10.1.2.3", n.Attributes["unique.network.ip-address"])
			},
		},
		{
			name: "listening everywhere",
			cfg:  Config{AdvertiseIP: "0.0.0.0"},
			check: func(t *testing.T, n *structs.Node) {
				must.Eq(t, "127.0.0.1", n.NodeResources.Networks[0].IP)
				must.Eq(t, 20000, n.NodeResources.MinDynamicPort)
				must.Eq(t, 32000, n.NodeResources.MaxDynamicPort)
			},
		},
		{
			name:  "network_interface",
			cfg:   Config{NetworkInterface: "lo", AdvertiseIP: "10.1.2.3"},
			check: func(t *testing.T, n *structs.Node) { must.Eq(t, "lo", n.NodeResources.Networks[0].Device) },
		},
		{name: "unknown interface", cfg: Config{NetworkInterface: "nosuch0"}, wantErr: `network_interface "nosuch0"`},
		{name: "missing volume", cfg: Config{HostVolumes: []*structs.ClientHostVolumeConfig{{Name: "v", Path: filepath.Join(dir, "nope")}}},
			wantErr: `host_volume "v"`},
		{name: "volume is a file", cfg: Config{HostVolumes: []*structs.ClientHostVolumeConfig{{Name: "v", Path: file}}},
			wantErr: `host_volume "v": path "` + file + `" is not a directory`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &structs.Node{
				Attributes:    map[string]string{},
				NodeResources: &structs.NodeResources{MinDynamicPort: 20000, MaxDynamicPort: 32000},
			}
			err := fingerprintNetworkAndVolumes(&tc.cfg, n)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			tc.check(t, n)
		})
	}
}

func TestComputedClass_HostVolumes(t *testing.T) {
	a := &structs.Node{HostVolumes: map[string]*structs.ClientHostVolumeConfig{"v": {Name: "v", Path: "/a"}}}
	b := &structs.Node{HostVolumes: map[string]*structs.ClientHostVolumeConfig{"v": {Name: "v", Path: "/b"}}}
	ro := &structs.Node{HostVolumes: map[string]*structs.ClientHostVolumeConfig{"v": {Name: "v", Path: "/a", ReadOnly: true}}}
	// Where a volume lives does not matter to placement; whether it is
	// there and writable does.
	must.Eq(t, computedClass(a), computedClass(b))
	must.NotEq(t, computedClass(a), computedClass(ro))
	must.NotEq(t, computedClass(a), computedClass(&structs.Node{}))
}
