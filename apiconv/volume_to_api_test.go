package apiconv

import (
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func volumesToAPI(in map[string]*structs.VolumeRequest) map[string]*api.VolumeRequest {
	if in == nil {
		return nil
	}
	out := make(map[string]*api.VolumeRequest, len(in))
	for k, v := range in {
		if v == nil {
			out[k] = nil
			continue
		}
		out[k] = &api.VolumeRequest{Name: v.Name, Type: v.Type, Source: v.Source, ReadOnly: v.ReadOnly}
	}
	return out
}

func volumeMountsToAPI(in []*structs.VolumeMount) []*api.VolumeMount {
	if in == nil {
		return nil
	}
	out := make([]*api.VolumeMount, len(in))
	for i, m := range in {
		if m != nil {
			// What api.VolumeMount.Canonicalize sets: nomadq mounts are
			// private and unlabelled.
			out[i] = &api.VolumeMount{Volume: new(m.Volume), Destination: new(m.Destination), ReadOnly: new(m.ReadOnly),
				PropagationMode: new("private"), SELinuxLabel: new("")}
		}
	}
	return out
}
