package agent

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// nodePoolsRequest answers GET /v1/node/pools (prefix filters by name)
// and PUT/POST /v1/node/pools, where the official client registers a
// pool.
func (h *httpHandler) nodePoolsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	switch {
	case r.Method == http.MethodGet:
		return h.nodePoolList(w, r)
	case isWrite(r):
		return h.nodePoolUpsert(w, r, "")
	}
	return nil, methodNotAllowed()
}

// nodePoolSpecificRequest answers /v1/node/pool/:name (GET, PUT/POST,
// DELETE) and its /nodes and /jobs listings. A name may hold "/" (it is
// then simply not found), so the suffixes are cut from the end.
func (h *httpHandler) nodePoolSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	path := strings.TrimPrefix(r.URL.Path, "/v1/node/pool/")
	if name, ok := strings.CutSuffix(path, "/nodes"); ok {
		return h.nodePoolNodes(w, r, name)
	}
	if name, ok := strings.CutSuffix(path, "/jobs"); ok {
		return h.nodePoolJobs(w, r, name)
	}
	switch {
	case r.Method == http.MethodGet:
		return h.nodePoolGet(w, r, path)
	case isWrite(r):
		return h.nodePoolUpsert(w, r, path)
	case r.Method == http.MethodDelete:
		return h.nodePoolDelete(w, r, path)
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) nodePoolList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.NodePoolListRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.NodePoolListResponse
	if err := h.agent.rpc("NodePool.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	list, err := filterAndPage(&args.QueryOptions, reply.NodePools, func(p *structs.NodePool) string { return p.Name }, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if list == nil {
		list = []*structs.NodePool{}
	}
	return list, nil
}

func (h *httpHandler) nodePoolGet(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	args := structs.NodePoolSpecificRequest{Name: name}
	var reply structs.SingleNodePoolResponse
	if err := h.query(w, r, "NodePool.GetNodePool", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.NodePool == nil {
		return nil, codedErr(http.StatusNotFound, "node pool not found")
	}
	return reply.NodePool, nil
}

func (h *httpHandler) nodePoolUpsert(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	var body api.NodePool
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if name != "" && body.Name != name {
		return nil, codedErr(http.StatusBadRequest, "Node pool name does not match request path: the URL names %q, the body %q", name, body.Name)
	}
	pool := apiNodePoolToStruct(&body)
	pool.Canonicalize()
	if err := pool.Validate(); err != nil {
		return nil, codedErr(http.StatusBadRequest, "invalid node pool %q: %v", pool.Name, err)
	}
	args := structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{pool}}
	var reply structs.GenericResponse
	if err := h.write(w, r, "NodePool.UpsertNodePools", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return handled{}, nil
}

func (h *httpHandler) nodePoolDelete(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	args := structs.NodePoolDeleteRequest{Names: []string{name}}
	var reply structs.GenericResponse
	if err := h.write(w, r, "NodePool.DeleteNodePools", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return handled{}, nil
}

func (h *httpHandler) nodePoolNodes(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.NodePoolSpecificRequest{Name: name}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if args.Prefix != "" {
		return nil, codedErr(http.StatusBadRequest, "prefix argument not allowed")
	}
	q := r.URL.Query()
	withResources, _ := strconv.ParseBool(q.Get("resources"))
	withOS, _ := strconv.ParseBool(q.Get("os"))
	var reply structs.NodePoolNodesResponse
	if err := h.agent.rpc("NodePool.ListNodes", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	stubs, err := h.nodeStubs(reply.Nodes, args.Region, args.AuthToken, withResources, withOS)
	if err != nil {
		return nil, err
	}
	stubs, err = filterAndPage(&args.QueryOptions, stubs, func(n *nodeListStub) string { return n.ID }, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if stubs == nil {
		stubs = []*nodeListStub{}
	}
	return stubs, nil
}

func (h *httpHandler) nodePoolJobs(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.NodePoolSpecificRequest{Name: name}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if args.Prefix != "" {
		return nil, codedErr(http.StatusBadRequest, "prefix argument not allowed")
	}
	var reply structs.NodePoolJobsResponse
	if err := h.agent.rpc("NodePool.ListJobs", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	jobs, err := filterAndPage(&args.QueryOptions, reply.Jobs, func(j *structs.JobListStub) string { return j.ID }, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if jobs == nil {
		jobs = []*structs.JobListStub{}
	}
	return jobs, nil
}

// apiNodePoolToStruct maps the client's pool to the server's, keeping
// SchedulerConfiguration so that it is refused by name.
func apiNodePoolToStruct(p *api.NodePool) *structs.NodePool {
	pool := &structs.NodePool{
		Name:            p.Name,
		Description:     p.Description,
		Meta:            p.Meta,
		NodeIdentityTTL: p.NodeIdentityTTL,
	}
	if c := p.SchedulerConfiguration; c != nil {
		pool.SchedulerConfiguration = &structs.NodePoolSchedulerConfiguration{
			SchedulerAlgorithm:            string(c.SchedulerAlgorithm),
			MemoryOversubscriptionEnabled: c.MemoryOversubscriptionEnabled,
		}
	}
	return pool
}
