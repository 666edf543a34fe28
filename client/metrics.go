package client

import (
	"github.com/nomadq/nomadq/client/allocrunner"
	"github.com/nomadq/nomadq/structs"
)

// MetricsSnapshot is what the agent's metrics read from the client at
// scrape time: only allocs this client runs now, so an alloc that is
// garbage collected leaves no series behind.
type MetricsSnapshot struct {
	NodeID     string
	Datacenter string
	NodePool   string
	NodeClass  string

	// MaxRunTimedOut lists the allocs on the client that
	// max_run_duration ended.
	MaxRunTimedOut []string

	// OOMKills counts the tasks the kernel killed for their memory limit
	// since the client started.
	OOMKills uint64

	// AllocsByStatus counts the client's allocs by client status
	// (pending, running, complete, failed, lost).
	AllocsByStatus map[string]int

	// Capacity is the node's schedulable capacity (total less reserved);
	// Allocated sums the reservations of its non-terminal allocs.
	Capacity  structs.ComparableResources
	Allocated structs.ComparableResources
}

// MetricsSnapshot reads the client's allocs and node resources now.
func (c *Client) MetricsSnapshot() MetricsSnapshot {
	node := c.Node()
	s := MetricsSnapshot{
		NodeID:         node.ID,
		Datacenter:     node.Datacenter,
		NodePool:       node.NodePool,
		NodeClass:      node.NodeClass,
		AllocsByStatus: make(map[string]int),
		Capacity:       node.Comparable(),
		OOMKills:       c.oomKills.Load(),
	}
	for _, ar := range c.allRunners() {
		status, desc := ar.ClientStatus()
		if desc == allocrunner.MaxRunDurationReason {
			s.MaxRunTimedOut = append(s.MaxRunTimedOut, ar.ID())
		}
		if status == "" {
			status = structs.AllocClientStatusPending
		}
		s.AllocsByStatus[status]++
		switch status {
		case structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusLost:
			continue
		}
		if a := ar.Alloc(); a != nil && !a.TerminalStatus() {
			s.Allocated.Add(a.AllocatedResources.Comparable())
		}
	}
	return s
}
