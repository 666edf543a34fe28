package serviceregistration

import (
	"fmt"
	"slices"

	"github.com/nomadq/nomadq/structs"
)

// NodeAddressAttr is the node attribute with the node's address, used
// when no network of the alloc names one.
const NodeAddressAttr = "unique.network.ip-address"

// IsNomad reports whether the servers' catalog holds the service: its
// provider is "nomad".
func IsNomad(s *structs.Service) bool {
	return s != nil && s.Provider == structs.ServiceProviderNomad
}

// GroupServices returns the nomad-provider services of the alloc's group.
func GroupServices(a *structs.Allocation) []*structs.Service {
	tg := group(a)
	if tg == nil {
		return nil
	}
	return nomadOnly(tg.Services)
}

// TaskServices returns the nomad-provider services of each task of the
// alloc's group that has any.
func TaskServices(a *structs.Allocation) map[string][]*structs.Service {
	tg := group(a)
	if tg == nil {
		return nil
	}
	out := make(map[string][]*structs.Service)
	for _, t := range tg.Tasks {
		if s := nomadOnly(t.Services); len(s) > 0 {
			out[t.Name] = s
		}
	}
	return out
}

// HasServices reports whether the alloc's group or any of its tasks has
// a nomad-provider service.
func HasServices(a *structs.Allocation) bool {
	return len(GroupServices(a)) > 0 || len(TaskServices(a)) > 0
}

func group(a *structs.Allocation) *structs.TaskGroup {
	if a == nil || a.Job == nil {
		return nil
	}
	return a.Job.LookupTaskGroup(a.TaskGroup)
}

func nomadOnly(in []*structs.Service) []*structs.Service {
	var out []*structs.Service
	for _, s := range in {
		if IsNomad(s) {
			out = append(out, s)
		}
	}
	return out
}

// Build returns the registrations of services of the alloc, owned by a
// task (task is its name) or by the group (task empty), on node. A
// service whose address cannot be resolved is an error naming it; the
// others are still returned.
func Build(a *structs.Allocation, node *structs.Node, task string, services []*structs.Service) ([]*structs.ServiceRegistration, error) {
	nodeAddr := ""
	var nodeID, dc string
	if node != nil {
		nodeAddr = node.Attributes[NodeAddressAttr]
		nodeID, dc = node.ID, node.Datacenter
	}
	if nodeID == "" {
		nodeID = a.NodeID
	}
	net := NetworkOf(a, nodeAddr)
	owner := task
	if owner == "" {
		owner = GroupOwner(a.TaskGroup)
	}
	var out []*structs.ServiceRegistration
	var errs []error
	for _, s := range services {
		addr, port, err := Resolve(net, s.Address, s.AddressMode, s.PortLabel)
		if err != nil {
			errs = append(errs, fmt.Errorf("service %q: %w", s.Name, err))
			continue
		}
		out = append(out, &structs.ServiceRegistration{
			ID:          MakeAllocServiceID(a.ID, owner, s),
			ServiceName: s.Name,
			Namespace:   a.Namespace,
			NodeID:      nodeID,
			Datacenter:  dc,
			JobID:       a.JobID,
			AllocID:     a.ID,
			Tags:        slices.Clone(s.Tags),
			Address:     addr,
			Port:        port,
		})
	}
	return out, joinErrs(errs)
}

func joinErrs(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msg := errs[0].Error()
	for _, e := range errs[1:] {
		msg += "; " + e.Error()
	}
	return fmt.Errorf("%s", msg)
}
