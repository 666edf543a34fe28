package agent

import (
	"net/http"
	"strconv"

	"github.com/nomadq/nomadq/structs"
)

func (h *httpHandler) allocsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.AllocListRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if v := r.URL.Query().Get("resources"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "resources must be a bool, got %q", v)
		}
		args.Resources = b
	}
	var reply structs.AllocListResponse
	if err := h.agent.rpc("Alloc.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	allocs := reply.Allocations
	allocs = page(&args.QueryOptions, allocs, func(a *structs.AllocListStub) string { return a.ID }, &reply.QueryMeta)
	if r.URL.Query().Get("task_states") == "false" {
		for i, a := range allocs {
			c := *a
			c.TaskStates = nil
			allocs[i] = &c
		}
	}
	setMeta(w, &reply.QueryMeta)
	if allocs == nil {
		allocs = []*structs.AllocListStub{}
	}
	return allocs, nil
}

func (h *httpHandler) allocSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	allocID, rest, err := pathID(r, "/v1/allocation/")
	if err != nil {
		return nil, err
	}
	if rest == "/stop" {
		return h.allocStopRequest(w, r, allocID)
	}
	if rest != "" {
		return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.AllocSpecificRequest{AllocID: allocID}
	var reply structs.SingleAllocResponse
	if err := h.query(w, r, "Alloc.Get", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Alloc == nil {
		return nil, codedErr(http.StatusNotFound, "alloc not found")
	}
	return reply.Alloc.Sanitize(), nil
}
