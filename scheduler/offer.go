package scheduler

import (
	"fmt"
	"slices"

	"github.com/nomadq/nomadq/structs"
)

// Exhaustion dimensions of the per-node assignments; the port ones are
// worded as Nomad words them, with "ports exhausted" added to the dynamic
// one so that a user sees at once what ran out.
const (
	dimCores          = "cores"
	dimDynamicPorts   = "network: dynamic port selection failed: ports exhausted"
	dimPortCollisionF = "network: reserved port collision %s=%d"
)

// Nomad's default dynamic port range, for nodes that do not publish one.
const (
	defaultMinDynamicPort = 20000
	defaultMaxDynamicPort = 32000
)

// offer is what one placement takes on a node beyond the group's fixed
// ask: host ports and whole cores, which are values only the node can
// give, and the CPU those cores stand for.
type offer struct {
	// ports are the group's ports with their assigned values.
	ports []structs.AllocatedPortMapping
	// network is the group network with values and the node's address.
	network *structs.NetworkResource
	// cores maps a task to the cores reserved for it alone.
	cores map[string][]uint16
	// coreMHz is the CPU of each task's reserved cores, in MHz.
	coreMHz map[string]int64
	// ask is the group's ask with the cores' CPU added.
	ask structs.ComparableResources
}

// nodeAddress is the address a node's tasks are reached at: the IP of its
// first fingerprinted network.
func nodeAddress(n *structs.Node) string {
	if n.NodeResources != nil {
		for _, nw := range n.NodeResources.Networks {
			if nw != nil && nw.IP != "" {
				return nw.IP
			}
		}
	}
	return ""
}

// reservableCores lists the cores of a node that allocations may reserve.
func reservableCores(n *structs.Node) []uint16 {
	if n.NodeResources == nil {
		return nil
	}
	c := n.NodeResources.Cpu
	if len(c.ReservableCpuCores) > 0 {
		return c.ReservableCpuCores
	}
	out := make([]uint16, c.TotalCpuCores)
	for i := range out {
		out[i] = uint16(i)
	}
	return out
}

// mhzPerCore is the CPU one of the node's cores stands for.
func mhzPerCore(n *structs.Node) int64 {
	if n.NodeResources == nil || n.NodeResources.Cpu.TotalCpuCores == 0 {
		return 0
	}
	return n.NodeResources.Cpu.CpuShares / int64(n.NodeResources.Cpu.TotalCpuCores)
}

// needsOffer reports whether a group takes ports or cores, which must be
// assigned per node.
func needsOffer(tg *structs.TaskGroup) bool {
	for _, n := range tg.Networks {
		if n != nil && len(n.ReservedPorts)+len(n.DynamicPorts) > 0 {
			return true
		}
	}
	for _, t := range tg.Tasks {
		if t.Resources != nil && t.Resources.Cores > 0 {
			return true
		}
	}
	return false
}

// makeOffer assigns the group's ports and cores on a node, given what is
// in use there, and checks that the whole ask fits; dim names what ran
// out when it does not.
func makeOffer(n *structs.Node, u *nodeUsage, tg *structs.TaskGroup, ask structs.ComparableResources) (*offer, string) {
	o := &offer{ask: ask}
	perCore := mhzPerCore(n)
	var free []uint16
	for _, t := range tg.Tasks {
		if t.Resources == nil || t.Resources.Cores <= 0 {
			continue
		}
		if free == nil {
			for _, c := range reservableCores(n) {
				if u.cores[c] == 0 {
					free = append(free, c)
				}
			}
		}
		want := t.Resources.Cores
		if want > len(free) {
			return nil, dimCores
		}
		if o.cores == nil {
			o.cores = make(map[string][]uint16)
			o.coreMHz = make(map[string]int64)
		}
		o.cores[t.Name] = slices.Clone(free[:want])
		free = free[want:]
		o.coreMHz[t.Name] = int64(want) * perCore
		o.ask.CPU += int64(want) * perCore
	}
	total := u.used
	total.Add(o.ask)
	if ok, dim := u.capacity.Superset(total); !ok {
		return nil, dim
	}
	if len(tg.Networks) == 0 || tg.Networks[0] == nil {
		return o, ""
	}
	return assignPorts(o, n, u, tg.Networks[0])
}

// assignPorts gives each static port its value if nothing holds it, and
// each dynamic port the lowest free value of the node's range.
func assignPorts(o *offer, n *structs.Node, u *nodeUsage, ask *structs.NetworkResource) (*offer, string) {
	ip := nodeAddress(n)
	mode := ask.Mode
	if mode == "" {
		mode = structs.NetworkModeHost
	}
	nw := &structs.NetworkResource{Mode: mode, IP: ip, MBits: ask.MBits}
	taken := make(map[int]bool)
	for _, p := range ask.ReservedPorts {
		if !p.IgnoreCollision && (u.ports[p.Value] > 0 || taken[p.Value]) {
			return nil, fmt.Sprintf(dimPortCollisionF, p.Label, p.Value)
		}
		taken[p.Value] = true
		nw.ReservedPorts = append(nw.ReservedPorts, p)
		o.ports = append(o.ports, structs.AllocatedPortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: ip})
	}
	lo, hi := defaultMinDynamicPort, defaultMaxDynamicPort
	if r := n.NodeResources; r != nil && r.MinDynamicPort > 0 && r.MaxDynamicPort >= r.MinDynamicPort {
		lo, hi = r.MinDynamicPort, r.MaxDynamicPort
	}
	next := lo
	for _, p := range ask.DynamicPorts {
		for next <= hi && (u.ports[next] > 0 || taken[next]) {
			next++
		}
		if next > hi {
			return nil, dimDynamicPorts
		}
		taken[next] = true
		p.Value = next
		nw.DynamicPorts = append(nw.DynamicPorts, p)
		o.ports = append(o.ports, structs.AllocatedPortMapping{Label: p.Label, Value: next, To: p.To, HostIP: ip})
	}
	o.network = nw
	return o, ""
}

// apply writes the offer into a new allocation's reservation.
func (o *offer) apply(ar *structs.AllocatedResources, legacy map[string]*structs.Resources, total *structs.Resources) {
	if o == nil {
		return
	}
	for task, cores := range o.cores {
		if t := ar.Tasks[task]; t != nil {
			t.Cpu.ReservedCores = cores
			t.Cpu.CpuShares += o.coreMHz[task]
		}
		if r := legacy[task]; r != nil {
			r.CPU += int(o.coreMHz[task])
		}
		total.CPU += int(o.coreMHz[task])
	}
	if o.network != nil {
		ar.Shared.Networks = []*structs.NetworkResource{o.network}
		ar.Shared.Ports = o.ports
		total.Networks = []*structs.NetworkResource{o.network.Copy()}
	}
}

// portValues returns the host ports an allocation holds.
func portValues(a *structs.Allocation) []int {
	claims := a.HostPorts()
	out := make([]int, len(claims))
	for i, c := range claims {
		out[i] = c.Value
	}
	return out
}
