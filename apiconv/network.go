package apiconv

import (
	"maps"
	"slices"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func networks(in []*api.NetworkResource) []*structs.NetworkResource {
	if in == nil {
		return nil
	}
	out := make([]*structs.NetworkResource, len(in))
	for i, n := range in {
		if n == nil {
			continue
		}
		nr := &structs.NetworkResource{
			Mode:          n.Mode,
			Device:        n.Device,
			CIDR:          n.CIDR,
			IP:            n.IP,
			Hostname:      n.Hostname,
			MBits:         deref(n.MBits),
			ReservedPorts: ports(n.ReservedPorts),
			DynamicPorts:  ports(n.DynamicPorts),
		}
		if d := n.DNS; d != nil {
			nr.DNS = &structs.DNSConfig{
				Servers:  slices.Clone(d.Servers),
				Searches: slices.Clone(d.Searches),
				Options:  slices.Clone(d.Options),
			}
		}
		if c := n.CNI; c != nil {
			nr.CNI = &structs.CNIConfig{Args: maps.Clone(c.Args)}
		}
		out[i] = nr
	}
	return out
}

func ports(in []api.Port) []structs.Port {
	if in == nil {
		return nil
	}
	out := make([]structs.Port, len(in))
	for i, p := range in {
		out[i] = structs.Port{
			Label:           p.Label,
			Value:           p.Value,
			To:              p.To,
			HostNetwork:     p.HostNetwork,
			IgnoreCollision: p.IgnoreCollision,
		}
	}
	return out
}
