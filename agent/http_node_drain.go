package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// nodeDrain answers PUT /v1/node/:id/drain: a DrainSpec sets or updates
// the drain, none clears it (with MarkEligible making the node eligible
// again).
func (h *httpHandler) nodeDrain(w http.ResponseWriter, r *http.Request, nodeID string) (any, error) {
	var body api.NodeUpdateDrainRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.NodeUpdateDrainRequest{NodeID: nodeID, MarkEligible: body.MarkEligible, Meta: body.Meta}
	if s := body.DrainSpec; s != nil {
		args.DrainStrategy = &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: s.Deadline, IgnoreSystemJobs: s.IgnoreSystemJobs}}
	}
	var reply structs.NodeDrainUpdateResponse
	if err := h.write(w, r, "Node.UpdateDrain", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// nodeEligibility answers PUT /v1/node/:id/eligibility.
func (h *httpHandler) nodeEligibility(w http.ResponseWriter, r *http.Request, nodeID string) (any, error) {
	var body api.NodeUpdateEligibilityRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.NodeUpdateEligibilityRequest{NodeID: nodeID, Eligibility: body.Eligibility}
	var reply structs.NodeEligibilityUpdateResponse
	if err := h.write(w, r, "Node.UpdateEligibility", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// nodeEvaluate answers PUT /v1/node/:id/evaluate (rpc "Node.Evaluate")
// and PUT /v1/node/:id/purge (rpc "Node.Deregister").
func (h *httpHandler) nodeEvaluate(w http.ResponseWriter, r *http.Request, nodeID, rpc string) (any, error) {
	args := structs.NodeEvaluateRequest{NodeID: nodeID}
	var reply structs.NodeEvalResponse
	if err := h.write(w, r, rpc, &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}
