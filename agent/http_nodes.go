package agent

import (
	"bytes"
	"net"
	"net/http"
	"sort"
	"strconv"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/structs"
)

// nodeListStub is the list view of a node as the API shows it.
type nodeListStub struct {
	Address               string
	ID                    string
	Attributes            map[string]string
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*structs.DriverInfo
	NodeResources         *structs.NodeResources
	ReservedResources     *structs.NodeReservedResources
	LastDrain             *structs.DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

func (h *httpHandler) nodesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.NodeListRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	withResources, _ := strconv.ParseBool(q.Get("resources"))
	withOS, _ := strconv.ParseBool(q.Get("os"))
	var reply structs.NodeListResponse
	if err := h.agent.rpc("Node.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	stubs, err := h.nodeStubs(reply.Nodes, args.Region, args.AuthToken, withResources, withOS)
	if err != nil {
		return nil, err
	}
	// Node.List has applied the filter to the whole nodes; only paging is left.
	stubs = page(&args.QueryOptions, stubs, func(n *nodeListStub) string { return n.ID }, &reply.QueryMeta)
	setMeta(w, &reply.QueryMeta)
	if stubs == nil {
		stubs = []*nodeListStub{}
	}
	return stubs, nil
}

// nodeStubs turns the server's node stubs into the API's list view,
// ordered by ID, with the address (and, when asked, the resources and
// attributes) read from each full node.
func (h *httpHandler) nodeStubs(nodes []*structs.NodeListStub, region, token string, withResources, withOS bool) ([]*nodeListStub, error) {
	stubs := make([]*nodeListStub, 0, len(nodes))
	for _, n := range nodes {
		s := &nodeListStub{
			ID: n.ID, Datacenter: n.Datacenter, Name: n.Name, NodeClass: n.NodeClass, NodePool: n.NodePool,
			Version: n.Version, Drain: n.Drain, SchedulingEligibility: n.SchedulingEligibility, Status: n.Status,
			StatusDescription: n.StatusDescription, Drivers: n.Drivers, LastDrain: n.LastDrain, CreateIndex: n.CreateIndex, ModifyIndex: n.ModifyIndex,
		}
		// The list stub lacks the address and resources; read the node.
		full, err := h.node(n.ID, region, token)
		if err != nil {
			return nil, err
		}
		if full != nil {
			s.Address = hostOf(full.HTTPAddr)
			if withResources {
				s.NodeResources, s.ReservedResources = full.NodeResources, full.ReservedResources
			}
		}
		if withOS || withResources {
			s.Attributes = n.Attributes
		}
		stubs = append(stubs, s)
	}
	sort.Slice(stubs, func(a, b int) bool { return stubs[a].ID < stubs[b].ID })
	return stubs, nil
}

func (h *httpHandler) node(id, region, token string) (*structs.Node, error) {
	args := structs.NodeSpecificRequest{NodeID: id}
	args.Region, args.AllowStale, args.AuthToken = region, true, token
	var reply structs.SingleNodeResponse
	if err := h.agent.rpc("Node.Get", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	return reply.Node, nil
}

func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

func (h *httpHandler) nodeSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	nodeID, rest, err := pathID(r, "/v1/node/")
	if err != nil {
		return nil, err
	}
	write := map[string]func() (any, error){
		"/drain":       func() (any, error) { return h.nodeDrain(w, r, nodeID) },
		"/eligibility": func() (any, error) { return h.nodeEligibility(w, r, nodeID) },
		"/evaluate":    func() (any, error) { return h.nodeEvaluate(w, r, nodeID, "Node.Evaluate") },
		"/purge":       func() (any, error) { return h.nodeEvaluate(w, r, nodeID, "Node.Deregister") },
	}
	if fn, ok := write[rest]; ok {
		if !isWrite(r) {
			return nil, methodNotAllowed()
		}
		return fn()
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	switch rest {
	case "":
		return h.nodeGet(w, r, nodeID)
	case "/allocations":
		return h.nodeAllocations(w, r, nodeID)
	}
	return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
}

func (h *httpHandler) nodeGet(w http.ResponseWriter, r *http.Request, nodeID string) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: nodeID}
	var reply structs.SingleNodeResponse
	if err := h.query(w, r, "Node.Get", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Node == nil {
		return nil, codedErr(http.StatusNotFound, "node not found")
	}
	return nodeView(reply.Node)
}

// nodeView is the node as Nomad's API shows it; the JSON handle's node
// extension empties SecretID and adds the computed Drain flag.
func nodeView(n *structs.Node) (any, error) {
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, structs.JsonHandle).Encode(n); err != nil {
		return nil, err
	}
	return rawJSON(buf.Bytes()), nil
}

func (h *httpHandler) nodeAllocations(w http.ResponseWriter, r *http.Request, nodeID string) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: nodeID}
	var reply structs.NodeAllocsResponse
	if err := h.query(w, r, "Node.GetAllocs", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	allocs := make([]*structs.Allocation, len(reply.Allocs))
	for i, a := range reply.Allocs {
		allocs[i] = a.Sanitize()
	}
	return allocs, nil
}
