package nomad

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// nodeForWrite reads the node an operator write names; an ID that is not
// a UUID or names no node is the caller's mistake.
func (n *Node) nodeForWrite(st *state.StateStore, id, what string) (*structs.Node, error) {
	if id == "" {
		return nil, structs.NewErrRPCCodedf(http.StatusBadRequest, "missing node ID for %s", what)
	}
	if !isUUID(id) {
		return nil, structs.NewErrRPCCodedf(http.StatusBadRequest, "node ID %q is not allowed: must be a 36 character UUID", id)
	}
	node, err := st.NodeByID(nil, id)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NewErrRPCCodedf(http.StatusNotFound, "node not found")
	}
	return node, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// UpdateDrain sets, updates or clears a node's drain strategy. The
// server fixes StartedAt and ForceDeadline here, once, and they travel in
// the Raft entry: every server applies the same instants, and a new
// leader after a failover enforces the same deadline.
func (n *Node) UpdateDrain(args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateDrain", args.WriteRequest, args, reply); done {
		return err
	}
	if args.NodeEvent != nil {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "node event must not be set")
	}
	node, err := n.nodeForWrite(n.srv.State(), args.NodeID, "drain update")
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	req := *args
	req.UpdatedAt = now.Unix()
	if args.DrainStrategy != nil {
		d := args.DrainStrategy.Copy()
		d.StartedAt = now
		if node.DrainStrategy != nil {
			d.StartedAt = node.DrainStrategy.StartedAt
		}
		d.ForceDeadline = time.Time{}
		if d.Deadline > 0 {
			d.ForceDeadline = now.Add(d.Deadline)
		}
		req.DrainStrategy = d
	}
	event := &structs.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
	switch {
	case node.DrainStrategy == nil && req.DrainStrategy != nil:
		event.Message = structs.NodeEventDrainSet
	case node.DrainStrategy != nil && req.DrainStrategy != nil:
		event.Message = structs.NodeEventDrainUpdated
	case node.DrainStrategy != nil:
		event.Message = structs.NodeEventDrainDisabled
	default:
		event = nil
	}
	req.NodeEvent = event

	// A node that becomes eligible again may be where system jobs and
	// blocked work now go.
	var evals []*structs.Evaluation
	if req.DrainStrategy == nil && req.MarkEligible && node.SchedulingEligibility == structs.NodeSchedulingIneligible {
		if evals, err = n.nodeEvals(n.srv.State(), node.ID); err != nil {
			return err
		}
	}
	_, index, err := n.srv.raftApply(structs.NodeUpdateDrainRequestType, &req)
	if err != nil {
		return codeNotFound(err)
	}
	reply.NodeModifyIndex = index
	reply.Index = index
	if len(evals) > 0 {
		ids, evalIndex, err := n.writeEvals(evals)
		if err != nil {
			return err
		}
		reply.EvalIDs, reply.EvalCreateIndex = ids, evalIndex
	}
	return nil
}

// UpdateEligibility makes a node eligible or ineligible for new
// placements. A draining node cannot be made eligible: the drain must be
// cleared first.
func (n *Node) UpdateEligibility(args *structs.NodeUpdateEligibilityRequest, reply *structs.NodeEligibilityUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateEligibility", args.WriteRequest, args, reply); done {
		return err
	}
	if args.NodeEvent != nil {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "node event must not be set")
	}
	switch args.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "invalid scheduling eligibility %q: must be %q or %q",
			args.Eligibility, structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
	}
	st := n.srv.State()
	node, err := n.nodeForWrite(st, args.NodeID, "setting scheduling eligibility")
	if err != nil {
		return err
	}
	if node.DrainStrategy != nil && args.Eligibility == structs.NodeSchedulingEligible {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "can not set node's scheduling eligibility to eligible while it is draining")
	}
	now := time.Now().UTC()
	req := &structs.NodeUpdateEligibilityRequest{NodeID: node.ID, Eligibility: args.Eligibility, UpdatedAt: now.Unix(), WriteRequest: args.WriteRequest}
	if node.SchedulingEligibility != args.Eligibility {
		msg := structs.NodeEventIneligible
		if args.Eligibility == structs.NodeSchedulingEligible {
			msg = structs.NodeEventEligible
			if req.Evals, err = n.nodeEvals(st, node.ID); err != nil {
				return err
			}
		}
		req.NodeEvent = &structs.NodeEvent{Subsystem: structs.NodeEventSubsystemCluster, Message: msg, Timestamp: now}
	}
	_, index, err := n.srv.raftApply(structs.NodeUpdateEligibilityRequestType, req)
	if err != nil {
		return codeNotFound(err)
	}
	reply.NodeModifyIndex = index
	reply.Index = index
	if len(req.Evals) > 0 {
		reply.EvalCreateIndex = index
		for _, e := range req.Evals {
			reply.EvalIDs = append(reply.EvalIDs, e.ID)
		}
	}
	return nil
}

// Evaluate writes node-update evals for every job with work on the node
// and every system job.
func (n *Node) Evaluate(args *structs.NodeEvaluateRequest, reply *structs.NodeEvalResponse) error {
	if done, err := n.srv.forward("Node.Evaluate", args.WriteRequest, args, reply); done {
		return err
	}
	st := n.srv.State()
	node, err := n.nodeForWrite(st, args.NodeID, "evaluation")
	if err != nil {
		return err
	}
	evals, err := n.nodeEvals(st, node.ID)
	if err != nil {
		return err
	}
	reply.NodeModifyIndex = node.ModifyIndex
	if len(evals) == 0 {
		return nil
	}
	ids, index, err := n.writeEvals(evals)
	if err != nil {
		return err
	}
	reply.EvalIDs, reply.EvalCreateIndex, reply.Index = ids, index, index
	return nil
}

// Deregister purges a node from the state. Its allocations are then lost
// and the evals written here replace them elsewhere. A live client
// registers again with its next heartbeat.
func (n *Node) Deregister(args *structs.NodeEvaluateRequest, reply *structs.NodeEvalResponse) error {
	if done, err := n.srv.forward("Node.Deregister", args.WriteRequest, args, reply); done {
		return err
	}
	st := n.srv.State()
	node, err := n.nodeForWrite(st, args.NodeID, "purge")
	if err != nil {
		return err
	}
	evals, err := n.nodeEvals(st, node.ID)
	if err != nil {
		return err
	}
	_, index, err := n.srv.raftApply(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}, WriteRequest: args.WriteRequest})
	if err != nil {
		return codeNotFound(err)
	}
	n.srv.heartbeats.Remove(node.ID)
	if err := n.srv.deleteNodeServices(node.ID); err != nil {
		return err
	}
	reply.NodeModifyIndex, reply.Index = index, index
	if len(evals) == 0 {
		return nil
	}
	ids, evalIndex, err := n.writeEvals(evals)
	if err != nil {
		return err
	}
	reply.EvalIDs, reply.EvalCreateIndex, reply.Index = ids, evalIndex, evalIndex
	return nil
}

// writeEvals commits evals and returns their IDs and the entry's index.
func (n *Node) writeEvals(evals []*structs.Evaluation) ([]string, uint64, error) {
	_, index, err := n.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals})
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, len(evals))
	for i, e := range evals {
		ids[i] = e.ID
	}
	return ids, index, nil
}

// GetAllocs lists the allocations placed on a node, known or not: an
// unknown node has none.
func (n *Node) GetAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	if done, err := n.srv.forward("Node.GetAllocs", args.QueryOptions, args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return errors.New("missing node ID")
	}
	aclObj, _, err := n.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		reply.Allocs = nil
		if !isUUID(args.NodeID) {
			return maxIndex(st, state.TableAllocs)
		}
		allocs, err := st.AllocsByNode(ws, args.NodeID)
		if err != nil {
			return 0, fmt.Errorf("allocations of node %s: %w", args.NodeID, err)
		}
		for _, a := range allocs {
			if aclObj.AllowNamespaceOperation(a.Namespace, acl.NamespaceCapabilityReadJob) {
				reply.Allocs = append(reply.Allocs, a)
			}
		}
		return maxIndex(st, state.TableAllocs)
	})
}
