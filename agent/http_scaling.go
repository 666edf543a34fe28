package agent

import (
	"net/http"
	"strings"

	"github.com/nomadq/nomadq/structs"
)

// scalingPoliciesRequest answers GET /v1/scaling/policies (?job=, ?type=).
func (h *httpHandler) scalingPoliciesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ScalingPolicyListRequest
	args.Job, args.Type = r.URL.Query().Get("job"), r.URL.Query().Get("type")
	var reply structs.ScalingPolicyListResponse
	if err := h.query(w, r, "Scaling.ListPolicies", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	return reply.Policies, nil
}

// scalingPolicyRequest answers GET /v1/scaling/policy/:id.
func (h *httpHandler) scalingPolicyRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	id := strings.TrimPrefix(r.URL.Path, "/v1/scaling/policy/")
	var args structs.ScalingPolicySpecificRequest
	args.ID = id
	var reply structs.SingleScalingPolicyResponse
	if err := h.query(w, r, "Scaling.GetPolicy", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Policy == nil {
		return nil, codedErr(http.StatusNotFound, "scaling policy not found")
	}
	return reply.Policy, nil
}
