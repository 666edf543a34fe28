package apiconv

import (
	"maps"
	"slices"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// services maps service blocks. api.Job.Canonicalize has already merged a
// service's check_restart into each of its checks and given the checks
// the service's on_update, as Nomad's server does.
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
			Checks:            serviceChecks(s.Checks),
			CheckRestart:      checkRestart(s.CheckRestart),
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

func serviceChecks(in []api.ServiceCheck) []*structs.ServiceCheck {
	if len(in) == 0 {
		return nil
	}
	out := make([]*structs.ServiceCheck, len(in))
	for i, c := range in {
		var header map[string][]string
		if c.Header != nil {
			header = make(map[string][]string, len(c.Header))
			for k, v := range c.Header {
				header[k] = slices.Clone(v)
			}
		}
		out[i] = &structs.ServiceCheck{
			Name:                   c.Name,
			Type:                   c.Type,
			Command:                c.Command,
			Args:                   slices.Clone(c.Args),
			Path:                   c.Path,
			Protocol:               c.Protocol,
			PortLabel:              c.PortLabel,
			Expose:                 c.Expose,
			AddressMode:            c.AddressMode,
			Interval:               c.Interval,
			Timeout:                c.Timeout,
			InitialStatus:          c.InitialStatus,
			Header:                 header,
			Method:                 c.Method,
			Body:                   c.Body,
			TaskName:               c.TaskName,
			OnUpdate:               c.OnUpdate,
			CheckRestart:           checkRestart(c.CheckRestart),
			SuccessBeforePassing:   c.SuccessBeforePassing,
			FailuresBeforeCritical: c.FailuresBeforeCritical,
			FailuresBeforeWarning:  c.FailuresBeforeWarning,
			TLSSkipVerify:          c.TLSSkipVerify,
			TLSServerName:          c.TLSServerName,
		}
	}
	return out
}

func checkRestart(in *api.CheckRestart) *structs.CheckRestart {
	if in == nil {
		return nil
	}
	return &structs.CheckRestart{
		Limit:          in.Limit,
		Grace:          deref(in.Grace),
		IgnoreWarnings: in.IgnoreWarnings,
	}
}
