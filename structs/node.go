package structs

import (
	"maps"
	"slices"
	"time"
)

// Node statuses.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"
)

// Node scheduling eligibility.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// Node is a client machine that runs allocations.
type Node struct {
	ID         string
	SecretID   string
	Datacenter string
	Name       string
	HTTPAddr   string
	// TLSEnabled says the node's HTTP API is HTTPS (tls.http), so the
	// official client reaches it with https.
	TLSEnabled bool
	Attributes map[string]string
	Meta       map[string]string
	NodeClass  string
	NodePool   string

	// ComputedClass groups nodes that are identical for feasibility, so
	// the scheduler checks one of each class.
	ComputedClass string

	NodeResources     *NodeResources
	ReservedResources *NodeReservedResources
	Drivers           map[string]*DriverInfo

	// HostVolumes are the host directories the client offers to jobs,
	// by name.
	HostVolumes map[string]*ClientHostVolumeConfig

	SchedulingEligibility string

	// DrainStrategy is set while the node drains; LastDrain records the
	// latest drain, finished or not.
	DrainStrategy *DrainStrategy
	LastDrain     *DrainMetadata

	Status            string
	StatusDescription string
	StatusUpdatedAt   int64
	Events            []*NodeEvent

	CreateIndex uint64
	ModifyIndex uint64
}

// Ready reports whether the node can take new allocations: it is up,
// eligible and not draining.
func (n *Node) Ready() bool {
	return n.Status == NodeStatusReady && n.SchedulingEligibility == NodeSchedulingEligible && n.DrainStrategy == nil
}

// CountReadyNodes counts the ready nodes of a list by node pool (the
// default pool for a node that names none) and datacenter.
func CountReadyNodes(nodes []*Node) map[string]map[string]int {
	ready := make(map[string]map[string]int)
	for _, n := range nodes {
		if !n.Ready() {
			continue
		}
		pool := n.NodePool
		if pool == "" {
			pool = DefaultNodePool
		}
		byDC := ready[pool]
		if byDC == nil {
			byDC = make(map[string]int)
			ready[pool] = byDC
		}
		byDC[n.Datacenter]++
	}
	return ready
}

// TerminalStatus reports whether the node is gone for scheduling.
func (n *Node) TerminalStatus() bool { return n.Status == NodeStatusDown }

// Copy returns a deep copy of the node.
func (n *Node) Copy() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Attributes = maps.Clone(n.Attributes)
	c.Meta = maps.Clone(n.Meta)
	if n.NodeResources != nil {
		r := *n.NodeResources
		r.Cpu.ReservableCpuCores = slices.Clone(n.NodeResources.Cpu.ReservableCpuCores)
		r.Networks = copyNetworks(n.NodeResources.Networks)
		c.NodeResources = &r
	}
	if n.HostVolumes != nil {
		c.HostVolumes = make(map[string]*ClientHostVolumeConfig, len(n.HostVolumes))
		for k, v := range n.HostVolumes {
			c.HostVolumes[k] = clonePtr(v)
		}
	}
	if n.ReservedResources != nil {
		r := *n.ReservedResources
		c.ReservedResources = &r
	}
	if n.Drivers != nil {
		c.Drivers = make(map[string]*DriverInfo, len(n.Drivers))
		for k, d := range n.Drivers {
			dc := *d
			dc.Attributes = maps.Clone(d.Attributes)
			c.Drivers[k] = &dc
		}
	}
	n.copyDrain(&c)
	c.Events = copyEach(n.Events, func(e *NodeEvent) {
		e.Details = maps.Clone(e.Details)
	})
	return &c
}

// Comparable returns the node's schedulable capacity: total minus reserved.
func (n *Node) Comparable() ComparableResources {
	var c ComparableResources
	if n.NodeResources == nil {
		return c
	}
	c.CPU = n.NodeResources.Cpu.CpuShares
	c.MemoryMB = n.NodeResources.Memory.MemoryMB
	c.DiskMB = n.NodeResources.Disk.DiskMB
	if r := n.ReservedResources; r != nil {
		c.CPU -= r.Cpu.CpuShares
		c.MemoryMB -= r.Memory.MemoryMB
		c.DiskMB -= r.Disk.DiskMB
	}
	return c
}

// NodeResources is what a node has.
type NodeResources struct {
	Cpu            NodeCpuResources
	Memory         NodeMemoryResources
	Disk           NodeDiskResources
	Networks       []*NetworkResource
	MinDynamicPort int
	MaxDynamicPort int
}

// NodeCpuResources is a node's CPU in MHz and cores.
type NodeCpuResources struct {
	CpuShares          int64
	TotalCpuCores      uint16
	ReservableCpuCores []uint16
}

// NodeMemoryResources is a node's memory in MB.
type NodeMemoryResources struct {
	MemoryMB int64
}

// NodeDiskResources is a node's allocatable disk in MB.
type NodeDiskResources struct {
	DiskMB int64
}

// NodeReservedResources is what the operator keeps away from allocations.
type NodeReservedResources struct {
	Cpu      NodeReservedCpuResources
	Memory   NodeReservedMemoryResources
	Disk     NodeReservedDiskResources
	Networks NodeReservedNetworkResources
}

// NodeReservedCpuResources is reserved CPU in MHz.
type NodeReservedCpuResources struct {
	CpuShares int64
}

// NodeReservedMemoryResources is reserved memory in MB.
type NodeReservedMemoryResources struct {
	MemoryMB int64
}

// NodeReservedDiskResources is reserved disk in MB.
type NodeReservedDiskResources struct {
	DiskMB int64
}

// NodeReservedNetworkResources lists reserved host ports.
type NodeReservedNetworkResources struct {
	ReservedHostPorts string
}

// DriverInfo is a driver's fingerprint on a node.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// NodeEvent is one entry in a node's history.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}
