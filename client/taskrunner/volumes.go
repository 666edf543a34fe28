package taskrunner

import (
	"fmt"
	"strings"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// VolumeEnvPrefix names the variable that tells a task where a host
// volume is: NOMAD_VOLUME_<volume> is the mount's destination for drivers
// that mount volumes into the task's own filesystem (exec), and the host
// path for the others (raw_exec), which cannot move a directory. Nomad has
// no such variable; nomadq adds it because raw_exec tasks would otherwise
// not know where their volume is.
const VolumeEnvPrefix = "NOMAD_VOLUME_"

// taskMounts resolves a task's volume_mount blocks against its group's
// volume blocks and the node's host volumes. A volume is read-only when
// the node, the group or the mount says so.
func taskMounts(a *structs.Allocation, t *structs.Task, n *structs.Node) ([]*drivers.Mount, error) {
	if len(t.VolumeMounts) == 0 {
		return nil, nil
	}
	var tg *structs.TaskGroup
	if a.Job != nil {
		tg = a.Job.LookupTaskGroup(a.TaskGroup)
	}
	var out []*drivers.Mount
	for _, m := range t.VolumeMounts {
		if m == nil {
			continue
		}
		var req *structs.VolumeRequest
		if tg != nil {
			req = tg.Volumes[m.Volume]
		}
		if req == nil {
			return nil, fmt.Errorf("volume_mount: group has no volume %q", m.Volume)
		}
		var hv *structs.ClientHostVolumeConfig
		if n != nil {
			hv = n.HostVolumes[req.Source]
		}
		if hv == nil {
			return nil, fmt.Errorf("volume %q: host volume %q is not configured on this node", m.Volume, req.Source)
		}
		out = append(out, &drivers.Mount{
			Volume:   m.Volume,
			HostPath: hv.Path,
			TaskPath: m.Destination,
			ReadOnly: hv.ReadOnly || req.ReadOnly || m.ReadOnly,
		})
	}
	return out, nil
}

// volumeEnv is the NOMAD_VOLUME_* variables of a task's mounts.
func volumeEnv(mounts []*drivers.Mount, inTask bool) map[string]string {
	if len(mounts) == 0 {
		return nil
	}
	env := make(map[string]string, len(mounts))
	for _, m := range mounts {
		p := m.HostPath
		if inTask {
			p = m.TaskPath
		}
		env[VolumeEnvPrefix+envName(m.Volume)] = p
	}
	return env
}

// envName turns a label into the part of a variable name it stands for,
// replacing what a shell would not accept, as Nomad does for port labels.
func envName(label string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, label)
}
