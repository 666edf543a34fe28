package structs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// VolumeTypeHost is the only volume type nomadq supports: a directory the
// client operator declared with a host_volume block.
const VolumeTypeHost = "host"

// VolumeRequest is a group's volume block: which of the node's host
// volumes the group needs, under the name its tasks mount it by.
type VolumeRequest struct {
	Name     string
	Type     string
	Source   string
	ReadOnly bool
}

// VolumeMount is a task's volume_mount block: where a group volume
// appears to the task.
type VolumeMount struct {
	Volume      string
	Destination string
	ReadOnly    bool
}

// ClientHostVolumeConfig is a host volume a client offers, as fingerprinted
// onto its node from the agent's host_volume blocks.
type ClientHostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
}

// NetworkModeHost is the default network mode: tasks share the node's
// network namespace and listen on their host ports. The others (bridge,
// none, cni/<name>) are in website/networking.md.
const NetworkModeHost = "host"

func validateVolumes(errs *MultiError, ctx string, vols map[string]*VolumeRequest) {
	for _, name := range slices.Sorted(maps.Keys(vols)) {
		v := vols[name]
		if v == nil {
			continue
		}
		add := func(format string, a ...any) {
			errs.Add(fmt.Errorf("%s: volume %q "+format, append([]any{ctx, name}, a...)...))
		}
		// Other types are refused where jobs arrive (apiconv's field
		// table), and never placed (scheduler/host_volume_checker.go).
		if v.Type == "" {
			add("type must be set: only \"host\" volumes are supported")
		}
		if v.Source == "" {
			add("source must not be empty: name the client's host_volume")
		}
	}
}

func validateVolumeMounts(errs *MultiError, ctx string, mounts []*VolumeMount, vols map[string]*VolumeRequest) {
	for i, m := range mounts {
		if m == nil {
			continue
		}
		add := func(format string, a ...any) {
			errs.Add(fmt.Errorf("%s: volume_mount %d "+format, append([]any{ctx, i + 1}, a...)...))
		}
		if _, ok := vols[m.Volume]; !ok {
			add("volume %q is not allowed: it must name a volume block of the group (have %s)", m.Volume, strings.Join(quoteAll(slices.Sorted(maps.Keys(vols))), ", "))
		}
		if m.Destination == "" {
			add("destination must not be empty")
		}
	}
}
