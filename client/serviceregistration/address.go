package serviceregistration

import (
	"fmt"
	"strconv"

	"github.com/nomadq/nomadq/structs"
)

// Address modes of services and checks, as Nomad names them.
const (
	AddressModeAuto  = "auto"
	AddressModeHost  = "host"
	AddressModeAlloc = "alloc"
	// AddressModeDriver uses the network a task driver reports; none of
	// nomadq's drivers reports one, so it resolves as host.
	AddressModeDriver = "driver"
)

// Network is what resolving a service's address needs from its alloc.
type Network struct {
	// Ports are the alloc's assigned ports (AllocatedResources), group
	// and task ports alike.
	Ports []structs.AllocatedPortMapping
	// Networks are the alloc's networks, for their IP.
	Networks []*structs.NetworkResource
	// Status is the alloc's own network (bridge mode); nil or empty when
	// the tasks share the host's network.
	Status *structs.AllocNetworkStatus
	// NodeAddress is the address of the node, used when no network
	// names one.
	NodeAddress string
}

// NetworkOf collects the alloc's ports, networks and network status.
func NetworkOf(a *structs.Allocation, nodeAddress string) Network {
	n := Network{Status: a.NetworkStatus, NodeAddress: nodeAddress}
	if ar := a.AllocatedResources; ar != nil {
		n.Ports = append(n.Ports, ar.Shared.Ports...)
		n.Networks = append(n.Networks, ar.Shared.Networks...)
		for _, t := range ar.Tasks {
			n.Networks = append(n.Networks, t.Networks...)
		}
	}
	return n
}

// port finds a port by label among the assigned ports, then among the
// networks' reserved and dynamic ports.
func (n Network) port(label string) (structs.AllocatedPortMapping, bool) {
	for _, p := range n.Ports {
		if p.Label == label {
			return p, true
		}
	}
	for _, nw := range n.Networks {
		for _, ps := range [][]structs.Port{nw.ReservedPorts, nw.DynamicPorts} {
			for _, p := range ps {
				if p.Label == label {
					return structs.AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: nw.IP}, true
				}
			}
		}
	}
	return structs.AllocatedPortMapping{}, false
}

// hostIP is the host address of the alloc's network, or the node's.
func (n Network) hostIP(p structs.AllocatedPortMapping) string {
	if p.HostIP != "" {
		return p.HostIP
	}
	for _, nw := range n.Networks {
		if nw.IP != "" {
			return nw.IP
		}
	}
	return n.NodeAddress
}

// literalPort reads a port given as a number instead of a label.
func literalPort(label string) (int, error) {
	p, err := strconv.Atoi(label)
	if err != nil {
		return 0, fmt.Errorf("invalid port %q: no port of the alloc has this label, and it is not a number", label)
	}
	if p <= 0 || p > 65535 {
		return 0, fmt.Errorf("invalid port %q: a port number must be 1 to 65535", label)
	}
	return p, nil
}

// Resolve returns the address and port of a service or check: custom is
// the service's own address (may be empty), mode its address_mode and
// label its port (a label of the alloc's ports or a number; empty for no
// port).
func Resolve(n Network, custom, mode, label string) (string, int, error) {
	switch mode {
	case "", AddressModeAuto:
		if custom == "" {
			return Resolve(n, "", AddressModeHost, label)
		}
		if label == "" {
			return custom, 0, nil
		}
		if p, ok := n.port(label); ok {
			return custom, p.Value, nil
		}
		port, err := literalPort(label)
		return custom, port, err
	case AddressModeHost, AddressModeDriver:
		if custom != "" {
			return "", 0, fmt.Errorf("address_mode %q cannot be used with a service address %q", mode, custom)
		}
		if label == "" {
			return n.hostIP(structs.AllocatedPortMapping{}), 0, nil
		}
		if p, ok := n.port(label); ok {
			return n.hostIP(p), p.Value, nil
		}
		port, err := literalPort(label)
		return n.hostIP(structs.AllocatedPortMapping{}), port, err
	case AddressModeAlloc:
		if custom != "" {
			return "", 0, fmt.Errorf("address_mode %q cannot be used with a service address %q", mode, custom)
		}
		if n.Status == nil || n.Status.Address == "" {
			return "", 0, fmt.Errorf(`cannot use address_mode="alloc": the allocation has no network of its own (network mode "bridge" gives it one)`)
		}
		if label == "" {
			return n.Status.Address, 0, nil
		}
		if p, ok := n.port(label); ok {
			if p.To > 0 {
				return n.Status.Address, p.To, nil
			}
			return n.Status.Address, p.Value, nil
		}
		port, err := literalPort(label)
		return n.Status.Address, port, err
	}
	return "", 0, fmt.Errorf("invalid address_mode %q: must be auto, host, alloc or driver", mode)
}
