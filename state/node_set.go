package state

import (
	"sync"

	"github.com/nomadq/nomadq/structs"
)

// nodeSetCache keeps the node list and its by-ID map as of one version of
// the nodes table, for the schedulers: every evaluation reads every node,
// and the table changes far less often than evaluations run (heartbeats
// do not write it). With a thousand nodes the list and the map cost more
// than scheduling a one-alloc job.
type nodeSetCache struct {
	mu    sync.Mutex
	index uint64
	nodes []*structs.Node
	byID  map[string]*structs.Node
}

// NodeSet returns every node in ID order and the same nodes by ID, as of
// this snapshot. Both are shared with every reader of the same version of
// the nodes table: callers must not modify them.
func (s *StateSnapshot) NodeSet() ([]*structs.Node, map[string]*structs.Node, error) {
	index, err := s.Index(TableNodes)
	if err != nil {
		return nil, nil, err
	}
	c := s.nodeSets
	if c != nil {
		c.mu.Lock()
		if c.nodes != nil && c.index == index {
			nodes, byID := c.nodes, c.byID
			c.mu.Unlock()
			return nodes, byID, nil
		}
		c.mu.Unlock()
	}
	nodes, err := s.Nodes(nil)
	if err != nil {
		return nil, nil, err
	}
	if nodes == nil {
		nodes = []*structs.Node{}
	}
	byID := make(map[string]*structs.Node, len(nodes))
	for _, n := range nodes {
		byID[n.ID] = n
	}
	if c != nil {
		c.mu.Lock()
		// An older snapshot must not replace a newer version.
		if c.nodes == nil || index > c.index {
			c.index, c.nodes, c.byID = index, nodes, byID
		}
		c.mu.Unlock()
	}
	return nodes, byID, nil
}
