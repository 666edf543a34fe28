package structs

import (
	"fmt"
	"maps"
	"regexp"
	"time"
)

// Raft message types of node pools, with Nomad's numbers.
const (
	NodePoolUpsertRequestType MessageType = 59
	NodePoolDeleteRequestType MessageType = 60
)

// Built-in node pool descriptions, as Nomad words them.
const (
	AllNodePoolDescription     = "Node pool with all nodes in the cluster."
	DefaultNodePoolDescription = "Default node pool."
)

// DefaultNodeIdentityTTL is the NodeIdentityTTL a pool gets when it sets
// none, as Nomad's.
const DefaultNodeIdentityTTL = 24 * time.Hour

// maxNodePoolDescriptionLength is Nomad's limit on a pool description.
const maxNodePoolDescriptionLength = 256

// validNodePoolName is the name rule Nomad applies to node pools.
var validNodePoolName = regexp.MustCompile("^[a-zA-Z0-9-_]{1,128}$")

// NodePool is a named set of client nodes. A node belongs to exactly one
// pool; a job names the pool it may be placed in ("all": any node).
type NodePool struct {
	Name        string
	Description string
	Meta        map[string]string

	// NodeIdentityTTL is kept and shown for API compatibility; this server
	// issues no node identities for it to bound.
	NodeIdentityTTL time.Duration

	// SchedulerConfiguration is the wire shape of per-pool scheduler
	// settings (a Nomad Enterprise feature); a pool that sets it is
	// refused by name.
	SchedulerConfiguration *NodePoolSchedulerConfiguration

	CreateIndex uint64
	ModifyIndex uint64
}

// NodePoolSchedulerConfiguration is the wire shape of per-pool scheduler
// settings.
type NodePoolSchedulerConfiguration struct {
	SchedulerAlgorithm            string
	MemoryOversubscriptionEnabled *bool
}

// ValidateNodePoolName checks a pool name against Nomad's rule.
func ValidateNodePoolName(name string) error {
	if !validNodePoolName.MatchString(name) {
		return fmt.Errorf("invalid name %q, must match regex %s", name, validNodePoolName)
	}
	return nil
}

// BuiltinNodePools returns the pools every cluster has: "all" and
// "default".
func BuiltinNodePools() []*NodePool {
	return []*NodePool{
		{Name: AllNodePools, Description: AllNodePoolDescription, Meta: map[string]string{}, NodeIdentityTTL: DefaultNodeIdentityTTL, CreateIndex: 1, ModifyIndex: 1},
		{Name: DefaultNodePool, Description: DefaultNodePoolDescription, Meta: map[string]string{}, NodeIdentityTTL: DefaultNodeIdentityTTL, CreateIndex: 1, ModifyIndex: 1},
	}
}

// IsBuiltinNodePool reports whether name is "all" or "default", which
// cannot be changed or deleted.
func IsBuiltinNodePool(name string) bool {
	return name == AllNodePools || name == DefaultNodePool
}

// Canonicalize fills in the default NodeIdentityTTL.
func (p *NodePool) Canonicalize() {
	if p.NodeIdentityTTL == 0 {
		p.NodeIdentityTTL = DefaultNodeIdentityTTL
	}
}

// Validate checks a pool to be stored.
func (p *NodePool) Validate() error {
	var errs MultiError
	errs.Add(ValidateNodePoolName(p.Name))
	if len(p.Description) > maxNodePoolDescriptionLength {
		errs.Add(fmt.Errorf("description longer than %d", maxNodePoolDescriptionLength))
	}
	if p.NodeIdentityTTL < 0 {
		errs.Add(fmt.Errorf("NodeIdentityTTL %s is not allowed: must not be negative", p.NodeIdentityTTL))
	}
	if p.SchedulerConfiguration != nil {
		errs.Add(fmt.Errorf("SchedulerConfiguration (scheduler_config) is not supported: per-pool scheduler settings are a Nomad Enterprise feature; the cluster's scheduler configuration applies to every pool"))
	}
	return errs.ErrorOrNil()
}

// Copy returns a deep copy of the pool.
func (p *NodePool) Copy() *NodePool {
	if p == nil {
		return nil
	}
	c := *p
	c.Meta = maps.Clone(p.Meta)
	if p.SchedulerConfiguration != nil {
		sc := *p.SchedulerConfiguration
		c.SchedulerConfiguration = &sc
	}
	return &c
}

// NodePoolUpsertRequest creates or replaces node pools.
type NodePoolUpsertRequest struct {
	NodePools []*NodePool
	WriteRequest
}

// NodePoolDeleteRequest deletes node pools by name.
type NodePoolDeleteRequest struct {
	Names []string
	WriteRequest
}

// NodePoolListRequest lists node pools (Prefix filters by name).
type NodePoolListRequest struct {
	QueryOptions
}

// NodePoolListResponse answers NodePool.List.
type NodePoolListResponse struct {
	NodePools []*NodePool
	QueryMeta
}

// NodePoolSpecificRequest reads one pool, its nodes or its jobs.
type NodePoolSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNodePoolResponse answers NodePool.Get; NodePool is nil when it
// does not exist.
type SingleNodePoolResponse struct {
	NodePool *NodePool
	QueryMeta
}

// NodePoolNodesResponse answers NodePool.ListNodes.
type NodePoolNodesResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// NodePoolJobsResponse answers NodePool.ListJobs.
type NodePoolJobsResponse struct {
	Jobs []*JobListStub
	QueryMeta
}
