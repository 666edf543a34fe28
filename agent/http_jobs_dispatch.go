package agent

import (
	"errors"
	"net/http"

	"github.com/nomadq/nomadq/structs"
)

// jobDispatchBody is api.JobDispatchRequest with the idempotency token,
// which Nomad's client sends as the idempotency_token query parameter,
// also accepted in the body.
type jobDispatchBody struct {
	JobID            string
	Payload          []byte // base64 in JSON
	Meta             map[string]string
	IdempotencyToken string
}

// jobDispatch answers PUT /v1/job/:id/dispatch.
func (h *httpHandler) jobDispatch(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	// A dispatch without payload or meta may come without a body.
	var body jobDispatchBody
	if r.ContentLength != 0 {
		if err := decodeBody(r, &body); err != nil && !errors.Is(err, errEmptyBody) {
			return nil, err
		}
	}
	if body.JobID != "" && body.JobID != jobID {
		return nil, codedErr(http.StatusBadRequest, "Job ID does not match: the URL names %q, the body %q", jobID, body.JobID)
	}
	args := structs.JobDispatchRequest{JobID: jobID, Payload: body.Payload, Meta: body.Meta}
	h.parseWrite(r, &args.WriteRequest)
	args.IdempotencyToken = body.IdempotencyToken
	if args.IdempotencyToken == "" {
		args.IdempotencyToken = args.WriteRequest.IdempotencyToken
	}
	var reply structs.JobDispatchResponse
	if err := h.agent.rpc("Job.Dispatch", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	return reply, nil
}

// jobPeriodicForce answers PUT /v1/job/:id/periodic/force.
func (h *httpHandler) jobPeriodicForce(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	args := structs.PeriodicForceRequest{JobID: jobID}
	var reply structs.PeriodicForceResponse
	if err := h.write(w, r, "Job.PeriodicForce", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}
