package nomad

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Node is the RPC endpoint clients use to register, heartbeat, learn their
// allocations and report on them.
type Node struct {
	srv *Server
}

// Register stores a node (new or re-registering) and starts its heartbeat
// timer.
func (n *Node) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.Register", args.WriteRequest, args, reply); done {
		return err
	}
	node := args.Node
	if node == nil {
		return errors.New("missing node for client registration")
	}
	if node.ID == "" {
		return errors.New("missing node ID for client registration")
	}
	if node.SecretID == "" {
		return errors.New("missing node secret ID for client registration")
	}
	if node.Datacenter == "" {
		return errors.New("missing datacenter for client registration")
	}
	if node.Name == "" {
		return errors.New("missing node name for client registration")
	}
	node = node.Copy()
	if node.Status == "" {
		node.Status = structs.NodeStatusInit
	}
	if !validNodeStatus(node.Status) {
		return fmt.Errorf("invalid status %q for node", node.Status)
	}
	if node.SchedulingEligibility == "" {
		node.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	if node.NodePool == "" {
		node.NodePool = structs.DefaultNodePool
	}
	if err := structs.ValidateNodePoolName(node.NodePool); err != nil {
		return fmt.Errorf("invalid node pool: %w", err)
	}
	if node.NodePool == structs.AllNodePools {
		return fmt.Errorf("invalid node pool: node is not allowed to register in node pool %q", structs.AllNodePools)
	}
	node.StatusUpdatedAt = time.Now().Unix()

	st := n.srv.State()
	existing, err := st.NodeByID(nil, node.ID)
	if err != nil {
		return err
	}
	if existing != nil && existing.SecretID != node.SecretID {
		return fmt.Errorf("node secret ID does not match the registered node %s", node.ID)
	}
	// A node new to the cluster must introduce itself as the
	// client_introduction block demands; a known one proved itself with
	// its secret above.
	if existing == nil {
		if err := n.introductionAllowed(node, args.AuthToken); err != nil {
			return err
		}
	}
	_, index, err := n.srv.raftApply(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node, NodeEvent: args.NodeEvent})
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = index
	reply.Index = index

	// A node that (re)appears ready may be where system jobs and blocked
	// work now go.
	if node.Status == structs.NodeStatusReady && (existing == nil || existing.Status != structs.NodeStatusReady) {
		if err := n.createNodeEvals(node.ID, index, reply); err != nil {
			return err
		}
	}
	n.fillResponse(node.ID, node.Status, reply)
	return nil
}

// UpdateStatus is the client's heartbeat; a status change is written with
// node-update evals for the jobs it affects.
func (n *Node) UpdateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateStatus", args.WriteRequest, args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return errors.New("missing node ID for client status update")
	}
	if !validNodeStatus(args.Status) {
		return fmt.Errorf("invalid status %q for node", args.Status)
	}
	st := n.srv.State()
	node, err := st.NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		// A 404 tells the client to register again.
		return structs.NewErrRPCCodedf(http.StatusNotFound, "node %s not found", args.NodeID)
	}
	reply.NodeModifyIndex = node.ModifyIndex
	if node.Status != args.Status {
		req := &structs.NodeUpdateStatusRequest{
			NodeID:    args.NodeID,
			Status:    args.Status,
			NodeEvent: args.NodeEvent,
			UpdatedAt: time.Now().Unix(),
		}
		if args.Status == structs.NodeStatusDown || args.Status == structs.NodeStatusReady {
			evals, err := n.nodeEvals(st, args.NodeID)
			if err != nil {
				return err
			}
			req.Evals = evals
		}
		_, index, err := n.srv.raftApply(structs.NodeUpdateStatusRequestType, req)
		if err != nil {
			return err
		}
		reply.NodeModifyIndex = index
		reply.Index = index
		reply.EvalCreateIndex = index
		for _, e := range req.Evals {
			reply.EvalIDs = append(reply.EvalIDs, e.ID)
		}
		if args.Status == structs.NodeStatusDown {
			if err := n.srv.deleteNodeServices(args.NodeID); err != nil {
				return err
			}
		}
	}
	n.fillResponse(args.NodeID, args.Status, reply)
	return nil
}

// fillResponse arms (or, for a down node, removes) the heartbeat timer and
// tells the client its TTL and the servers.
func (n *Node) fillResponse(nodeID, status string, reply *structs.NodeUpdateResponse) {
	if status == structs.NodeStatusDown {
		n.srv.heartbeats.Remove(nodeID)
	} else {
		reply.HeartbeatTTL = n.srv.heartbeats.Reset(nodeID)
	}
	reply.LeaderRPCAddr = n.srv.rpcAdvertise.String()
	reply.NumNodes = int32(n.srv.heartbeats.Count())
	for _, m := range n.srv.Members() {
		if p, ok := isNomadServer(m); ok && p.Region == n.srv.config.Region {
			reply.Servers = append(reply.Servers, &structs.NodeServerInfo{RPCAdvertiseAddr: p.RPCAddr.String(), Datacenter: p.Datacenter})
		}
	}
	n.srv.setQueryMeta(&reply.QueryMeta)
}

// createNodeEvals writes node-update evals for the node's jobs.
func (n *Node) createNodeEvals(nodeID string, index uint64, reply *structs.NodeUpdateResponse) error {
	evals, err := n.nodeEvals(n.srv.State(), nodeID)
	if err != nil || len(evals) == 0 {
		return err
	}
	_, idx, err := n.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	if err != nil {
		return err
	}
	reply.EvalCreateIndex = idx
	for _, e := range evals {
		reply.EvalIDs = append(reply.EvalIDs, e.ID)
	}
	return nil
}

// nodeEvals returns one node-update eval per job with a live alloc on the
// node, and one per system or sysbatch job (which may want the node).
func (n *Node) nodeEvals(st *state.StateStore, nodeID string) ([]*structs.Evaluation, error) {
	allocs, err := st.AllocsByNode(nil, nodeID)
	if err != nil {
		return nil, err
	}
	seen := make(map[structs.NamespacedID]bool)
	var evals []*structs.Evaluation
	add := func(job *structs.Job) {
		key := job.NamespacedID()
		if seen[key] {
			return
		}
		seen[key] = true
		now := time.Now().UnixNano()
		evals = append(evals, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      job.Namespace,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerNodeUpdate,
			JobID:          job.ID,
			JobModifyIndex: job.JobModifyIndex,
			NodeID:         nodeID,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		})
	}
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		job, err := st.JobByID(nil, a.Namespace, a.JobID)
		if err != nil {
			return nil, err
		}
		if job != nil && !job.Stop {
			add(job)
		}
	}
	jobs, err := st.Jobs(nil)
	if err != nil {
		return nil, err
	}
	for _, job := range jobs {
		if (job.Type == structs.JobTypeSystem || job.Type == structs.JobTypeSysBatch) && !job.Stop && !job.IsPeriodic() && !job.IsParameterized() {
			add(job)
		}
	}
	return evals, nil
}

func validNodeStatus(s string) bool {
	switch s {
	case structs.NodeStatusInit, structs.NodeStatusReady, structs.NodeStatusDown, structs.NodeStatusDisconnected:
		return true
	}
	return false
}

// GetClientAllocs is the client's blocking watch of its allocations: it
// answers a map of alloc ID to the index at which the server last changed
// the alloc, so the client fetches only what moved.
func (n *Node) GetClientAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeClientAllocsResponse) error {
	if done, err := n.srv.forward("Node.GetClientAllocs", args.QueryOptions, args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return errors.New("missing node ID")
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		node, err := st.NodeByID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		if node == nil {
			return 0, fmt.Errorf("node %s not found", args.NodeID)
		}
		if args.SecretID != "" && node.SecretID != args.SecretID {
			return 0, errors.New("node secret ID does not match")
		}
		st.WatchNodeAllocs(ws, args.NodeID)
		allocs, err := st.AllocsByNode(nil, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Allocs = make(map[string]uint64, len(allocs))
		// A garbage collection deletes allocs without raising any modify
		// index; answering with at least its index lets the client see
		// that its allocs are gone.
		index, err := st.Index(state.IndexAllocsDeleted)
		if err != nil {
			return 0, err
		}
		index = max(index, 1)
		for _, a := range allocs {
			reply.Allocs[a.ID] = a.AllocModifyIndex
			index = max(index, a.AllocModifyIndex)
		}
		return index, nil
	})
}

// UpdateAlloc applies a client's alloc status updates at once (the client
// batches them), with an alloc-failure eval for each job with a newly
// failed alloc so the scheduler can reschedule it. Updates of several
// clients arriving together share a Raft entry (see applyAllocUpdates).
func (n *Node) UpdateAlloc(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("Node.UpdateAlloc", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Alloc) == 0 {
		return errors.New("must update at least one allocation")
	}
	st := n.srv.State()
	seen := make(map[structs.NamespacedID]bool)
	var evals []*structs.Evaluation
	updates := make([]*structs.Allocation, 0, len(args.Alloc))
	now := time.Now().UnixNano()
	for i, upd := range args.Alloc {
		if upd == nil {
			return fmt.Errorf("alloc update %d is null", i)
		}
		existing, err := st.AllocByID(nil, upd.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue // garbage collected meanwhile
		}
		u := *upd
		u.ModifyTime = now
		updates = append(updates, &u)
		if upd.ClientStatus != structs.AllocClientStatusFailed || existing.ClientStatus == structs.AllocClientStatusFailed {
			continue
		}
		job, err := st.JobByID(nil, existing.Namespace, existing.JobID)
		if err != nil {
			return err
		}
		if job == nil || job.Stop || seen[job.NamespacedID()] {
			continue
		}
		seen[job.NamespacedID()] = true
		evals = append(evals, &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      job.Namespace,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerRetryFailedAlloc,
			JobID:          job.ID,
			JobModifyIndex: job.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		})
	}
	if len(updates) == 0 {
		return nil
	}
	index, err := n.srv.allocUpdates.Submit(&structs.AllocUpdateRequest{Alloc: updates, Evals: evals}, len(updates))
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// Get reads one node; Node is nil when it does not exist.
func (n *Node) Get(args *structs.NodeSpecificRequest, reply *structs.SingleNodeResponse) error {
	if done, err := n.srv.forward("Node.Get", args.QueryOptions, args, reply); done {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		node, err := st.NodeByID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Node = node
		if node != nil {
			return node.ModifyIndex, nil
		}
		return maxIndex(st, "nodes")
	})
}

// List lists nodes, filtered by ID prefix.
func (n *Node) List(args *structs.NodeListRequest, reply *structs.NodeListResponse) error {
	if done, err := n.srv.forward("Node.List", args.QueryOptions, args, reply); done {
		return err
	}
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var nodes []*structs.Node
		var err error
		if args.Prefix != "" {
			nodes, err = st.NodesByIDPrefix(ws, args.Prefix)
		} else {
			nodes, err = st.Nodes(ws)
		}
		if err != nil {
			return 0, err
		}
		// The secret is never shown, so no filter may test it either.
		if nodes, err = structs.KeepMatching(filter, nodes, func(n *structs.Node) any { c := *n; c.SecretID = ""; return &c }); err != nil {
			return 0, err
		}
		reply.Nodes = make([]*structs.NodeListStub, 0, len(nodes))
		for _, node := range nodes {
			reply.Nodes = append(reply.Nodes, node.Stub())
		}
		return maxIndex(st, "nodes")
	})
}
