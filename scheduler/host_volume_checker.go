package scheduler

import (
	"maps"
	"slices"

	"github.com/nomadq/nomadq/structs"
)

// hostVolumeChecker keeps nodes that offer every host volume the group
// asks for, writable where the group writes.
type hostVolumeChecker struct {
	volumes []*structs.VolumeRequest
}

func newHostVolumeChecker(vols map[string]*structs.VolumeRequest) hostVolumeChecker {
	var c hostVolumeChecker
	for _, name := range slices.Sorted(maps.Keys(vols)) {
		if v := vols[name]; v != nil {
			c.volumes = append(c.volumes, v)
		}
	}
	return c
}

// classSafe: a node's host volumes are part of its computed class.
func (c hostVolumeChecker) classSafe() bool { return true }

func (c hostVolumeChecker) check(_ *evalContext, n *structs.Node) (bool, rejection) {
	for _, v := range c.volumes {
		if v.Type != structs.VolumeTypeHost {
			// No node offers another kind of volume.
			return false, rejection{filterHostVolumes, `volume type "` + v.Type + `" missing`}
		}
		hv, ok := n.HostVolumes[v.Source]
		if !ok || hv == nil {
			return false, rejection{filterHostVolumes, `host volume "` + v.Source + `" missing`}
		}
		if hv.ReadOnly && !v.ReadOnly {
			return false, rejection{filterHostVolumes, `writable host volume "` + v.Source + `" missing`}
		}
	}
	return true, rejection{}
}
