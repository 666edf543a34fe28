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
	// ready counts the ready nodes by node pool and datacenter, computed
	// the first time a scheduler asks for it at this version.
	ready map[string]map[string]int
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
			c.index, c.nodes, c.byID, c.ready = index, nodes, byID, nil
		}
		c.mu.Unlock()
	}
	return nodes, byID, nil
}

// ReadyNodeCounts returns how many nodes are ready for placements
// (structs.Node.Ready), by node pool and then datacenter, as of this
// snapshot. Like NodeSet it is shared between readers of the same version
// of the nodes table and must not be modified. It lets a scheduler report
// how many nodes a job's pool and datacenters hold without visiting each
// node.
func (s *StateSnapshot) ReadyNodeCounts() (map[string]map[string]int, error) {
	index, err := s.Index(TableNodes)
	if err != nil {
		return nil, err
	}
	c := s.nodeSets
	if c != nil {
		c.mu.Lock()
		if c.ready != nil && c.index == index {
			ready := c.ready
			c.mu.Unlock()
			return ready, nil
		}
		c.mu.Unlock()
	}
	nodes, _, err := s.NodeSet()
	if err != nil {
		return nil, err
	}
	ready := structs.CountReadyNodes(nodes)
	if c != nil {
		c.mu.Lock()
		// Only next to the node list of the same version.
		if c.index == index && c.nodes != nil {
			c.ready = ready
		}
		c.mu.Unlock()
	}
	return ready, nil
}
