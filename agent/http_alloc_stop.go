package agent

import (
	"net/http"

	"github.com/nomadq/nomadq/structs"
)

// allocStopRequest serves PUT/POST /v1/allocation/:id/stop: the alloc is
// marked to migrate and an eval replaces it.
func (h *httpHandler) allocStopRequest(w http.ResponseWriter, r *http.Request, allocID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	args := structs.AllocStopRequest{AllocID: allocID}
	q := r.URL.Query()
	for name, into := range map[string]*bool{"no_shutdown_delay": &args.NoShutdownDelay, "reschedule": &args.Reschedule} {
		if !q.Has(name) {
			continue
		}
		b, err := parseBoolParam(q.Get(name))
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "%s must be a bool, got %q", name, q.Get(name))
		}
		*into = b
	}
	var reply structs.AllocStopResponse
	if err := h.write(w, r, "Alloc.Stop", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return &reply, nil
}
