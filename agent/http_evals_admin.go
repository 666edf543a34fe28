package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// evalsCountRequest answers GET /v1/evaluations/count: how many evals
// match the namespace, prefix and filter parameters.
func (h *httpHandler) evalsCountRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.EvalListRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	// The server applies the filter; the count is of every match, unpaged.
	args.PerPage, args.NextToken = 0, ""
	var reply structs.EvalListResponse
	if err := h.agent.rpc("Eval.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return struct {
		Count int
		structs.QueryMeta
	}{len(reply.Evaluations), reply.QueryMeta}, nil
}

// evalsDeleteRequest answers DELETE /v1/evaluations, by EvalIDs or by
// Filter (never both). The filter is evaluated here on the listed evals
// (go-bexpr, as Eval.List does); the server then deletes the matching evals that are
// safe to delete and skips the rest, as Nomad's delete by filter does.
func (h *httpHandler) evalsDeleteRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.EvalDeleteRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	switch {
	case body.Filter != "" && len(body.EvalIDs) > 0:
		return nil, codedErr(http.StatusBadRequest, "evals cannot be deleted by both ID and filter")
	case body.Filter == "" && len(body.EvalIDs) == 0:
		return nil, codedErr(http.StatusBadRequest, "evals must be deleted by either ID or filter")
	case len(body.EvalIDs) > structs.MaxUUIDsPerWriteRequest:
		return nil, codedErr(http.StatusBadRequest, "request includes %d evaluation IDs, must be %d or fewer", len(body.EvalIDs), structs.MaxUUIDsPerWriteRequest)
	}
	args := structs.EvalUserDeleteRequest{EvalIDs: body.EvalIDs}
	h.parseWrite(r, &args.WriteRequest)
	if body.Filter != "" {
		f, err := structs.NewFilter(body.Filter)
		if err != nil {
			return nil, rpcError(err)
		}
		list := structs.EvalListRequest{QueryOptions: structs.QueryOptions{Region: args.Region, Namespace: "*", AuthToken: args.AuthToken}}
		var evals structs.EvalListResponse
		if err := h.agent.rpc("Eval.List", &list, &evals); err != nil {
			return nil, rpcError(err)
		}
		matched, err := structs.KeepMatching(f, evals.Evaluations, func(e *structs.Evaluation) any { return e })
		if err != nil {
			return nil, rpcError(err)
		}
		args.SkipUnsafe = true
		args.EvalIDs = make([]string, 0, len(matched))
		for _, e := range matched {
			args.EvalIDs = append(args.EvalIDs, e.ID)
		}
	}
	var reply structs.EvalDeleteResponse
	if err := h.agent.rpc("Eval.Delete", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	return reply, nil
}

// systemReconcileSummariesRequest answers PUT /v1/system/reconcile/summaries.
func (h *httpHandler) systemReconcileSummariesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var args structs.GenericRequest
	args.Region = r.URL.Query().Get("region")
	if args.Region == "" {
		args.Region = h.agent.config.Region
	}
	args.AuthToken = authToken(r)
	var reply structs.GenericResponse
	if err := h.agent.rpc("System.ReconcileJobSummaries", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	return nil, nil
}
