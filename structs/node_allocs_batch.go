package structs

// NodeSecret names a node and carries the secret it registered with:
// the proof that the caller speaks for that node.
type NodeSecret struct {
	NodeID   string
	SecretID string
}

// NodesClientAllocsRequest is the nomadq-only Node.GetClientAllocsBatch
// query: one blocking watch of the allocs of many nodes at once, as the
// node simulator runs them. Every node must be authenticated by its own
// secret (or the caller holds a management token).
type NodesClientAllocsRequest struct {
	Nodes []NodeSecret
	QueryOptions
}

// NodesClientAllocsResponse maps node ID to that node's allocs (alloc ID
// to AllocModifyIndex), for every node of the request whose allocs
// changed after the request's MinQueryIndex (every node when it is 0).
// A node listed has its complete alloc set, so an alloc missing from it
// is gone.
type NodesClientAllocsResponse struct {
	Allocs map[string]map[string]uint64
	QueryMeta
}
