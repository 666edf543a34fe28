package apiconv

import (
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// Host volumes (issue 17): a group's volume blocks and a task's
// volume_mount blocks. The CSI-only fields of api.VolumeRequest (Sticky,
// AccessMode, AttachmentMode, MountOptions, PerAlloc) and a mount's
// PropagationMode and SELinuxLabel have no counterpart: host volumes are
// mounted private and unlabelled.

func volumes(in map[string]*api.VolumeRequest) map[string]*structs.VolumeRequest {
	if in == nil {
		return nil
	}
	out := make(map[string]*structs.VolumeRequest, len(in))
	for k, v := range in {
		if v == nil {
			out[k] = nil
			continue
		}
		out[k] = &structs.VolumeRequest{Name: v.Name, Type: v.Type, Source: v.Source, ReadOnly: v.ReadOnly}
	}
	return out
}

func volumeMounts(in []*api.VolumeMount) []*structs.VolumeMount {
	if in == nil {
		return nil
	}
	out := make([]*structs.VolumeMount, len(in))
	for i, m := range in {
		if m != nil {
			out[i] = &structs.VolumeMount{Volume: deref(m.Volume), Destination: deref(m.Destination), ReadOnly: deref(m.ReadOnly)}
		}
	}
	return out
}
