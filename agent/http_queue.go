package agent

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/nomadq/nomadq/structs"
)

// queueStatusRequest serves GET /v1/queue: the batch queue settings, its
// depth by status and the placing workloads. Blocking queries wait on the
// leader's queue index.
func (h *httpHandler) queueStatusRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.BatchQueueListRequest{}
	var reply structs.BatchQueueStatusResponse
	if err := h.query(w, r, "Queue.Status", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	return reply.Status, nil
}

// queueJobsRequest serves GET /v1/queue/jobs: the entries in release
// order, paged with per_page/next_token; ?namespace=X lists X's only.
// ?job_id=ID (with ?namespace=) answers that one job's entry, or an
// empty array.
func (h *httpHandler) queueJobsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.BatchQueueListRequest{JobID: r.URL.Query().Get("job_id")}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	// The queue is one line across namespaces: without ?namespace= the
	// listing shows every namespace the token may read, as "*" does;
	// naming one lists only its entries.
	if !r.URL.Query().Has("namespace") && args.JobID == "" {
		args.Namespace = "*"
	}
	var reply structs.BatchQueueListResponse
	if err := h.agent.rpc("Queue.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	// Page tokens come from the leader: they sort like the listing and
	// keep their place as the queue moves.
	type ranked struct {
		rank  string
		entry *structs.BatchQueueListEntry
	}
	items := make([]ranked, len(reply.Entries))
	for i, e := range reply.Entries {
		items[i] = ranked{fmt.Sprintf("%010d", i+1), e}
		if len(reply.Tokens) == len(reply.Entries) {
			items[i].rank = reply.Tokens[i]
		}
	}
	// The leader answers the whole line; the filter applies to the
	// entries as they are listed, before paging.
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return nil, rpcError(err)
	}
	items, err = structs.KeepMatching(filter, items, func(it ranked) any { return it.entry })
	if err != nil {
		return nil, rpcError(err)
	}
	items = page(&args.QueryOptions, items, func(it ranked) string { return it.rank }, &reply.QueryMeta)
	setMeta(w, &reply.QueryMeta)
	out := make([]*structs.BatchQueueListEntry, 0, len(items))
	for _, it := range items {
		out = append(out, it.entry)
	}
	return out, nil
}

// queueJobControlRequest serves PUT (or POST) /v1/queue/job/:id/hold,
// /release and /top (with ?namespace=): an operator's control of a
// queued job, applied through Raft. The answer is {"Index": N}.
func (h *httpHandler) queueJobControlRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	jobID, rest, err := pathID(r, "/v1/queue/job/")
	if err != nil {
		return nil, err
	}
	op := strings.TrimPrefix(rest, "/")
	if jobID == "" || op == "" {
		return nil, codedErr(http.StatusNotFound, "Use /v1/queue/job/<job>/hold, /release or /top")
	}
	args := structs.BatchQueueControlRequest{JobID: jobID, Op: op}
	var reply structs.BatchQueueControlResponse
	if err := h.write(w, r, "Queue.Control", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// queueUsageRequest serves GET /v1/queue/usage: per namespace its
// weight, decayed usage, normalized usage and share, and fair-share
// factor, as the multifactor order weighs them (Slurm's sshare).
func (h *httpHandler) queueUsageRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.BatchQueueUsageRequest{}
	var reply structs.BatchQueueUsageResponse
	if err := h.query(w, r, "Queue.Usage", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	return reply.Usage, nil
}

// queueUsageResetRequest serves PUT (or POST)
// /v1/queue/usage/reset?namespace=NS: an operator's reset of a
// namespace's decayed usage, through Raft. The namespace must be named:
// a reset of whichever namespace a token defaults to is too easy to send
// by mistake.
func (h *httpHandler) queueUsageResetRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	if r.URL.Query().Get("namespace") == "" {
		return nil, codedErr(http.StatusBadRequest, "namespace is required: use /v1/queue/usage/reset?namespace=<namespace>")
	}
	args := structs.BatchQueueUsageResetRequest{}
	var reply structs.BatchQueueUsageResetResponse
	if err := h.write(w, r, "Queue.ResetUsage", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}
