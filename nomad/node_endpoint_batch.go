package nomad

import (
	"errors"
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// maxNodesPerAllocsBatch bounds one Node.GetClientAllocsBatch query, so
// that a single wake-up re-reads a bounded number of nodes.
const maxNodesPerAllocsBatch = 1024

// GetClientAllocsBatch is GetClientAllocs for many nodes in one blocking
// query (nomadq only; the node simulator uses it so that thousands of
// simulated nodes hold tens of queries, not thousands). It answers, for
// each node whose allocs changed after MinQueryIndex, the node's full map
// of alloc ID to AllocModifyIndex.
func (n *Node) GetClientAllocsBatch(args *structs.NodesClientAllocsRequest, reply *structs.NodesClientAllocsResponse) error {
	if done, err := n.srv.forward("Node.GetClientAllocsBatch", args.QueryOptions, args, reply); done {
		return err
	}
	if len(args.Nodes) == 0 {
		return errors.New("missing nodes: Nodes must name at least one node")
	}
	if len(args.Nodes) > maxNodesPerAllocsBatch {
		return fmt.Errorf("too many nodes: %d given, at most %d allowed in one query", len(args.Nodes), maxNodesPerAllocsBatch)
	}
	for _, ns := range args.Nodes {
		if ns.NodeID == "" {
			return errors.New("missing node ID in Nodes")
		}
	}
	min := args.MinQueryIndex
	ids := make([]string, len(args.Nodes))
	for i, ns := range args.Nodes {
		ids[i] = ns.NodeID
	}
	// What the query last made of each node (read, or found unchanged
	// since min) and as of which snapshot; a later run skips a node no
	// commit has changed since. Reset when a restore replaces the store.
	var (
		seen     []batchNodeSeen // by position in args.Nodes
		readFrom *state.StateStore
		watch    *state.AllocsWatch
		changed  = make([]uint64, len(ids))
	)
	defer func() {
		if watch != nil {
			readFrom.ReleaseAllocsWatch(watch)
		}
	}()
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		if watch != nil {
			readFrom.ReleaseAllocsWatch(watch)
		}
		if st != readFrom { // first run, or the store was replaced by a restore
			seen = make([]batchNodeSeen, len(ids))
			readFrom = st
		}
		// One watch on all the nodes, taken before the snapshot: a
		// commit after it wakes the query. All nodes are read from that
		// one snapshot, so a plan placing on two of them is seen on
		// both or on neither. (Read one by one from the live store, a
		// plan landing between two reads could be seen on the second
		// and not the first, and the answer's index would then claim
		// the first was up to date with it.)
		watch = st.WatchNodesAllocs(ids)
		ws.Add(watch.Ch())
		snap, err := st.Snapshot()
		if err != nil {
			return 0, err
		}
		asOf, err := snap.LatestIndex()
		if err != nil {
			return 0, err
		}
		// As in GetClientAllocs: a garbage collection deletes allocs
		// without raising any modify index, so its index counts for
		// every node it touched.
		deleted, err := snap.Index(state.IndexAllocsDeleted)
		if err != nil {
			return 0, err
		}
		// Each node's changed-at index, read after the snapshot, is at or
		// above every commit of the node the snapshot holds (it is raised
		// before a commit is visible). A node whose index is no higher
		// than the snapshot the query last saw it in is unchanged since.
		st.AllocsWatchChangedAt(watch, changed)
		reply.Allocs = make(map[string]map[string]uint64)
		index := max(uint64(1), deleted)
		// The nodes are checked in the snapshot's shared node map, not
		// looked up one by one. Deleting a node or giving it a new secret
		// raises its changed-at index, so a node skipped as unchanged is
		// still there with the same secret.
		var byID map[string]*structs.Node
		for i, ns := range args.Nodes {
			at := changed[i]
			if prev := seen[i]; prev.valid && at <= prev.asOf {
				index = max(index, prev.index)
				continue
			}
			if byID == nil {
				if _, byID, err = snap.NodeSet(); err != nil {
					return 0, err
				}
			}
			node := byID[ns.NodeID]
			if node == nil {
				return 0, fmt.Errorf("node %s not found", ns.NodeID)
			}
			if ns.SecretID != "" && node.SecretID != ns.SecretID {
				return 0, fmt.Errorf("node %s: node secret ID does not match", ns.NodeID)
			}
			// A node whose allocs no commit changed after the caller's
			// index is answered without reading them: a sim agent's
			// query names a hundred nodes and returns at almost every
			// placement, so reading every node's allocs each time cost
			// more than the placements.
			if min > 0 && max(at, deleted) <= min {
				index = max(index, at)
				seen[i] = batchNodeSeen{index: max(at, deleted, 1), asOf: asOf, valid: true}
				continue
			}
			allocs, err := snap.AllocsByNode(nil, ns.NodeID)
			if err != nil {
				return 0, err
			}
			nodeIndex := max(deleted, 1)
			for _, a := range allocs {
				nodeIndex = max(nodeIndex, a.AllocModifyIndex)
			}
			index = max(index, nodeIndex)
			if min > 0 && nodeIndex <= min {
				seen[i] = batchNodeSeen{index: nodeIndex, asOf: asOf, valid: true}
				continue
			}
			seen[i] = batchNodeSeen{}
			m := make(map[string]uint64, len(allocs))
			for _, a := range allocs {
				m[a.ID] = a.AllocModifyIndex
			}
			reply.Allocs[ns.NodeID] = m
		}
		return index, nil
	})
}

// batchNodeSeen is what a batch alloc query last made of one node: the
// node's index, and the latest index of the snapshot it was read from
// (the caller holds the node's allocs as of that snapshot).
type batchNodeSeen struct {
	index uint64
	asOf  uint64
	valid bool
}

// nodeSecrets: a caller acting for many nodes, each authenticated by its
// own secret in the request (or a management token).
func nodeSecrets(s *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	if a.IsManagement() {
		return nil
	}
	req, ok := args.(*structs.NodesClientAllocsRequest)
	if !ok || len(req.Nodes) == 0 {
		return structs.ErrPermissionDenied
	}
	snap, err := s.State().Snapshot()
	if err != nil {
		return err
	}
	_, byID, err := snap.NodeSet()
	if err != nil {
		return err
	}
	for _, ns := range req.Nodes {
		if ns.SecretID == "" {
			return structs.ErrPermissionDenied
		}
		node := byID[ns.NodeID]
		if node == nil || node.SecretID != ns.SecretID {
			return structs.ErrPermissionDenied
		}
	}
	return nil
}
