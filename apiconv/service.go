package apiconv

import (
	"maps"
	"slices"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func services(in []*api.Service) []*structs.Service {
	if in == nil {
		return nil
	}
	out := make([]*structs.Service, len(in))
	for i, s := range in {
		if s == nil {
			continue
		}
		out[i] = &structs.Service{
			Name:              s.Name,
			PortLabel:         s.PortLabel,
			Tags:              slices.Clone(s.Tags),
			Provider:          s.Provider,
			AddressMode:       s.AddressMode,
			TaskName:          s.TaskName,
			CanaryTags:        slices.Clone(s.CanaryTags),
			EnableTagOverride: s.EnableTagOverride,
			Address:           s.Address,
			Meta:              maps.Clone(s.Meta),
			CanaryMeta:        maps.Clone(s.CanaryMeta),
			TaggedAddresses:   maps.Clone(s.TaggedAddresses),
			OnUpdate:          s.OnUpdate,
			Cluster:           s.Cluster,
			Kind:              s.Kind,
		}
	}
	return out
}
