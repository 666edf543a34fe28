package agent

import (
	"fmt"
	"net/http"

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
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.BatchQueueStatusResponse
	if err := h.agent.rpc("Queue.Status", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return reply.Status, nil
}

// queueJobsRequest serves GET /v1/queue/jobs: the entries in release
// order, paged with per_page/next_token. ?job_id=ID (with ?namespace=)
// answers that one job's entry, or an empty array.
func (h *httpHandler) queueJobsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.BatchQueueListRequest{JobID: r.URL.Query().Get("job_id")}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
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
	filterOpts := args.QueryOptions
	filterOpts.Filter = ""
	page, err := filterAndPage(&filterOpts, items, func(it ranked) string { return it.rank }, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	out := make([]*structs.BatchQueueListEntry, 0, len(page))
	for _, it := range page {
		out = append(out, it.entry)
	}
	return out, nil
}
