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
	// A wake-up re-reads only the nodes whose watches fired. Any other
	// node's answer is what the previous run read, at or below min (or
	// the query would have returned), so it is skipped as before.
	var unchanged map[string]*batchNodeWatch
	var readFrom *state.StateStore
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		if st != readFrom { // first run, or the store was replaced by a restore
			unchanged = make(map[string]*batchNodeWatch, len(args.Nodes))
			readFrom = st
		}
		// Every node to read gets its watch first, and then all are read
		// from one snapshot taken after: a write landing after the
		// snapshot wakes the query, and one plan placing on two nodes is
		// seen on both or on neither. (Read one by one from the live
		// store, a plan landing between two nodes' reads could be seen
		// on the second and not the first, and the answer's index would
		// then claim the first was up to date with it.)
		reply.Allocs = make(map[string]map[string]uint64)
		index := uint64(1)
		type toRead struct {
			ns structs.NodeSecret
			ws memdb.WatchSet
		}
		var reads []toRead
		type toSkip struct {
			ns structs.NodeSecret
			w  *batchNodeWatch
		}
		var skips []toSkip
		for _, ns := range args.Nodes {
			if w := unchanged[ns.NodeID]; w != nil && !state.WatchFired(w.ws) {
				skips = append(skips, toSkip{ns: ns, w: w})
				continue
			}
			nodeWS := memdb.NewWatchSet()
			st.WatchNodeAllocs(nodeWS, ns.NodeID)
			reads = append(reads, toRead{ns: ns, ws: nodeWS})
		}
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
		index = max(index, deleted)
		// A node skipped for an unfired watch may still have changed in
		// the snapshot: its commit may be visible while the channels are
		// still closing, and the nodes read below would then carry that
		// commit's index into the answer without it. Its changed-at
		// index, read after the snapshot, covers every commit the
		// snapshot holds; one above the snapshot the node was last read
		// from means it may have changed, and it is read with the rest,
		// its watch (taken before that snapshot) kept.
		for _, sk := range skips {
			if st.NodeAllocsChangedAt(sk.ns.NodeID) > sk.w.asOf {
				reads = append(reads, toRead{ns: sk.ns, ws: sk.w.ws})
				continue
			}
			for ch := range sk.w.ws {
				ws.Add(ch)
			}
			index = max(index, sk.w.index)
		}
		// The nodes are checked in the snapshot's shared node map, not
		// looked up one by one: a first run checks every node it names,
		// and a query returns at almost every placement on one of them.
		// No watch on the node records is needed: deleting a node
		// closes its alloc watch.
		var byID map[string]*structs.Node
		if len(reads) > 0 {
			if _, byID, err = snap.NodeSet(); err != nil {
				return 0, err
			}
		}
		for _, r := range reads {
			ns, nodeWS := r.ns, r.ws
			node := byID[ns.NodeID]
			if node == nil {
				return 0, fmt.Errorf("node %s not found", ns.NodeID)
			}
			if ns.SecretID != "" && node.SecretID != ns.SecretID {
				return 0, fmt.Errorf("node %s: node secret ID does not match", ns.NodeID)
			}
			for ch := range nodeWS {
				ws.Add(ch)
			}
			// A node whose allocs no commit changed after the caller's
			// index is answered without reading them: a sim agent's
			// query names a hundred nodes and returns at almost every
			// placement, so reading every node's allocs each time cost
			// more than the placements.
			if at := st.NodeAllocsChangedAt(ns.NodeID); min > 0 && max(at, deleted) <= min {
				index = max(index, at)
				unchanged[ns.NodeID] = &batchNodeWatch{ws: nodeWS, index: max(at, deleted, 1), asOf: asOf}
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
				unchanged[ns.NodeID] = &batchNodeWatch{ws: nodeWS, index: nodeIndex, asOf: asOf}
				continue
			}
			delete(unchanged, ns.NodeID)
			m := make(map[string]uint64, len(allocs))
			for _, a := range allocs {
				m[a.ID] = a.AllocModifyIndex
			}
			reply.Allocs[ns.NodeID] = m
		}
		return index, nil
	})
}

// batchNodeWatch is what a batch alloc query last read of one node: the
// node's index, the latest index of the snapshot it was read from (the
// caller holds the node's allocs as of that snapshot), and the watch on
// its allocs that says when that read is out of date.
type batchNodeWatch struct {
	ws    memdb.WatchSet
	index uint64
	asOf  uint64
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
