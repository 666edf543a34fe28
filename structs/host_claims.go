package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// HostPortClaim is one host port an allocation holds; Shared is set when
// the port was asked with ignore_collision, which lets it be taken even
// though another allocation holds it.
type HostPortClaim struct {
	Value  int
	Shared bool
}

// HostPorts returns the host ports the allocation holds on its node.
func (a *Allocation) HostPorts() []HostPortClaim {
	if a == nil || a.AllocatedResources == nil {
		return nil
	}
	shared := make(map[int]bool)
	var out []HostPortClaim
	for _, n := range a.AllocatedResources.Shared.Networks {
		if n == nil {
			continue
		}
		for _, p := range n.ReservedPorts {
			shared[p.Value] = shared[p.Value] || p.IgnoreCollision
		}
		if len(a.AllocatedResources.Shared.Ports) == 0 {
			for _, p := range n.ReservedPorts {
				out = append(out, HostPortClaim{p.Value, p.IgnoreCollision})
			}
			for _, p := range n.DynamicPorts {
				out = append(out, HostPortClaim{Value: p.Value})
			}
		}
	}
	for _, p := range a.AllocatedResources.Shared.Ports {
		out = append(out, HostPortClaim{p.Value, shared[p.Value]})
	}
	return out
}

// ReservedCores returns the cores the allocation's tasks hold alone.
func (a *Allocation) ReservedCores() []uint16 {
	if a == nil || a.AllocatedResources == nil {
		return nil
	}
	var out []uint16
	for _, t := range a.AllocatedResources.Tasks {
		if t != nil {
			out = append(out, t.Cpu.ReservedCores...)
		}
	}
	return out
}

// HostClaimCollision reports the first host port or core that two of the
// allocations hold, in the words of the scheduler's exhaustion
// dimensions; "" means none. reserved are the node's reserved ports. The
// allocations are taken in order, so a later claim with ignore_collision
// may share a port an earlier one holds.
func HostClaimCollision(reserved []int, allocs []*Allocation) string {
	ports := make(map[int]bool, len(reserved))
	for _, p := range reserved {
		ports[p] = true
	}
	cores := make(map[uint16]bool)
	for _, a := range allocs {
		for _, p := range a.HostPorts() {
			if ports[p.Value] && !p.Shared {
				return fmt.Sprintf("network: port %d collision", p.Value)
			}
			ports[p.Value] = true
		}
		for _, c := range a.ReservedCores() {
			if cores[c] {
				return fmt.Sprintf("cores: core %d collision", c)
			}
			cores[c] = true
		}
	}
	return ""
}

// ReservedHostPorts parses the node's reserved port list ("22,80,8000-8010");
// entries that do not parse are skipped, the client checked them.
func (n *Node) ReservedHostPorts() []int {
	if n.ReservedResources == nil {
		return nil
	}
	var out []int
	for _, part := range strings.Split(n.ReservedResources.Networks.ReservedHostPorts, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				continue
			}
		}
		for p := a; p <= b && p <= MaxPort; p++ {
			out = append(out, p)
		}
	}
	return out
}
