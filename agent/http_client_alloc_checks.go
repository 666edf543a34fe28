package agent

import (
	"net/http"
)

// clientAllocChecks serves GET /v1/client/allocation/:id/checks: the
// latest result of each health check of the alloc's nomad-provider
// services, by check ID, in Nomad's shape. The caller needs read-job in
// the alloc's namespace (the alloc lookup decides it); the node running
// the alloc answers.
func (h *httpHandler) clientAllocChecks(w http.ResponseWriter, r *http.Request, allocID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	t, err := h.localAlloc(w, r, allocID)
	if t == nil {
		return handled{}, err
	}
	out, err := t.ce.AllocChecks(t.alloc.ID)
	if err != nil {
		return nil, rpcError(err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}
