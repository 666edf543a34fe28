package structs

import (
	"maps"
	"time"
)

// Drain statuses kept in a node's LastDrain.
const (
	DrainStatusDraining = "draining"
	DrainStatusComplete = "complete"
	DrainStatusCanceled = "canceled"
)

// Node event subsystems and the messages the server writes for drain
// and eligibility changes; Nomad's tools read these texts.
const (
	NodeEventSubsystemDrain   = "Drain"
	NodeEventSubsystemCluster = "Cluster"

	NodeEventDrainSet        = "Node drain strategy set"
	NodeEventDrainUpdated    = "Node drain strategy updated"
	NodeEventDrainDisabled   = "Node drain disabled"
	NodeEventDrainComplete   = "Node drain complete"
	NodeEventEligible        = "Node marked as eligible for scheduling"
	NodeEventIneligible      = "Node marked as ineligible for scheduling"
	NodeEventDetailDeadlined = "deadline_reached"
)

// DrainSpec is what an operator asks of a drain.
type DrainSpec struct {
	// Deadline is how long allocations may take to leave the node before
	// the remaining ones are stopped: negative stops them at once, zero
	// waits as long as they take.
	Deadline time.Duration

	// IgnoreSystemJobs leaves system job allocations on the node.
	IgnoreSystemJobs bool
}

// DrainStrategy is a node's drain in progress. ForceDeadline and
// StartedAt are fixed by the server when the drain is set and travel in
// the Raft entry, so every server and every leader after a failover
// works from the same instant.
type DrainStrategy struct {
	DrainSpec

	// ForceDeadline is when the remaining allocations are stopped; zero
	// when Deadline is not positive.
	ForceDeadline time.Time

	// StartedAt is when the drain began.
	StartedAt time.Time
}

// Copy returns a copy of the strategy.
func (d *DrainStrategy) Copy() *DrainStrategy {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// DeadlineTime reports whether the drain has a deadline and when it is;
// a forced drain (negative Deadline) has one that has already passed.
func (d *DrainStrategy) DeadlineTime() (bool, time.Time) {
	switch {
	case d == nil:
		return false, time.Time{}
	case d.Deadline < 0:
		return true, time.Time{}
	case d.Deadline == 0:
		return false, time.Time{}
	}
	return true, d.ForceDeadline
}

// DrainMetadata records the node's most recent drain.
type DrainMetadata struct {
	StartedAt  time.Time
	UpdatedAt  time.Time
	Status     string
	AccessorID string
	Meta       map[string]string
}

// Copy returns a deep copy of the metadata.
func (m *DrainMetadata) Copy() *DrainMetadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Meta = maps.Clone(m.Meta)
	return &c
}

// Draining reports whether the node has a drain in progress.
func (n *Node) Draining() bool { return n.DrainStrategy != nil }

// NodeUpdateDrainRequest sets or clears a node's drain strategy.
type NodeUpdateDrainRequest struct {
	NodeID        string
	DrainStrategy *DrainStrategy

	// MarkEligible makes the node eligible again when the drain is
	// cleared.
	MarkEligible bool

	// Meta is kept in the node's LastDrain.
	Meta map[string]string

	NodeEvent *NodeEvent
	UpdatedAt int64
	WriteRequest
}

// DrainUpdate is one node's part of a BatchNodeUpdateDrainRequest.
type DrainUpdate struct {
	DrainStrategy *DrainStrategy
	MarkEligible  bool
}

// BatchNodeUpdateDrainRequest is the drainer's write that ends drains:
// each update clears a node's strategy and marks its LastDrain complete.
type BatchNodeUpdateDrainRequest struct {
	Updates    map[string]*DrainUpdate
	NodeEvents map[string]*NodeEvent
	UpdatedAt  int64
	WriteRequest
}

// NodeDrainUpdateResponse answers Node.UpdateDrain.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeEligibilityUpdateResponse answers Node.UpdateEligibility.
type NodeEligibilityUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// NodeEvaluateRequest asks for node-update evals of one node.
type NodeEvaluateRequest struct {
	NodeID string
	WriteRequest
}

// NodeEvalResponse answers Node.Evaluate and Node.Deregister.
type NodeEvalResponse struct {
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	WriteMeta
}

// NodeAllocsResponse answers Node.GetAllocs.
type NodeAllocsResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// copyDrain deep-copies the drain fields of a node copy.
func (n *Node) copyDrain(c *Node) {
	c.DrainStrategy = n.DrainStrategy.Copy()
	c.LastDrain = n.LastDrain.Copy()
}
