package agent

import (
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/nomadq/nomadq/structs"
)

// forwardedHeader marks a client request that an agent forwarded to the
// node running the alloc; that node answers it itself or fails, so a
// request never travels in a loop.
const forwardedHeader = "X-Nomadq-Forwarded"

// allocTarget says where a /v1/client request about an alloc is served:
// by this agent's client (ce set) or by the node that runs it (addr set).
type allocTarget struct {
	alloc *structs.Allocation
	ce    clientEndpoints
	addr  string
}

// unknownAlloc is Nomad's answer for an alloc that does not exist.
func unknownAlloc(id string) error {
	return codedErr(http.StatusNotFound, "Unknown allocation %q", id)
}

// locateAlloc finds the node that runs allocID. Clients have no RPC
// listener of their own (they dial the servers, never the reverse), so a
// request for an alloc of another node travels to that node's HTTP API,
// at the address the node registered; the official client does the same
// when it reaches the node directly.
func (h *httpHandler) locateAlloc(r *http.Request, allocID string) (*allocTarget, error) {
	if len(allocID) != 36 {
		// Client endpoints take full IDs only; the state store's index
		// would refuse a prefix with a lookup error.
		return nil, unknownAlloc(allocID)
	}
	var a structs.SingleAllocResponse
	args := structs.AllocSpecificRequest{AllocID: allocID}
	args.AllowStale = true
	args.Region = h.agent.config.Region
	args.Namespace = r.URL.Query().Get("namespace")
	args.AuthToken = authToken(r)
	if err := h.agent.rpc("Alloc.Get", &args, &a); err != nil {
		return nil, rpcError(err)
	}
	if a.Alloc == nil {
		return nil, unknownAlloc(allocID)
	}
	t := &allocTarget{alloc: a.Alloc}
	if h.agent.client != nil && h.agent.client.NodeID() == a.Alloc.NodeID {
		ce, err := h.clientAPI()
		if err != nil {
			return nil, err
		}
		t.ce = ce
		return t, nil
	}
	if r.Header.Get(forwardedHeader) != "" {
		return nil, codedErr(http.StatusNotFound, "Unknown allocation %q: not running on this node", allocID)
	}
	node, err := h.allocNode(r, a.Alloc.NodeID)
	if err != nil {
		return nil, err
	}
	switch {
	case node == nil:
		return nil, codedErr(http.StatusNotFound, "Unknown node %q of allocation %q", a.Alloc.NodeID, allocID)
	case node.Status == structs.NodeStatusDown:
		return nil, codedErr(http.StatusBadRequest, "node %q of allocation %q is down", a.Alloc.NodeID, allocID)
	case node.HTTPAddr == "":
		return nil, codedErr(http.StatusInternalServerError, "node %q of allocation %q advertises no HTTP address", a.Alloc.NodeID, allocID)
	}
	t.addr = node.HTTPAddr
	return t, nil
}

// allocNode reads the node of an alloc the caller may act on. A server
// agent reads its own state: the caller's access was decided on the alloc,
// and needs no node:read on top. An agent without a server asks one with
// the caller's token.
func (h *httpHandler) allocNode(r *http.Request, nodeID string) (*structs.Node, error) {
	if h.agent.server != nil {
		n, err := h.agent.server.State().NodeByID(nil, nodeID)
		if err != nil {
			return nil, codedErr(http.StatusInternalServerError, "read node %q: %v", nodeID, err)
		}
		return n, nil
	}
	var n structs.SingleNodeResponse
	nargs := structs.NodeSpecificRequest{NodeID: nodeID}
	nargs.AllowStale = true
	nargs.Region = h.agent.config.Region
	nargs.AuthToken = authToken(r)
	if err := h.agent.rpc("Node.Get", &nargs, &n); err != nil {
		return nil, rpcError(err)
	}
	return n.Node, nil
}

// localAlloc returns where this agent's client serves allocID, or nil
// when it does not: then the request has been forwarded to the node that
// runs the alloc and answered (err nil), or refused (err set).
func (h *httpHandler) localAlloc(w http.ResponseWriter, r *http.Request, allocID string) (*allocTarget, error) {
	t, err := h.locateAlloc(r, allocID)
	if err != nil {
		return nil, err
	}
	if t.ce == nil {
		h.forward(w, r, t.addr)
		return nil, nil
	}
	return t, nil
}

// forward passes the request to the node at addr and copies its answer
// back, streaming bodies as they come; WebSocket upgrades (exec) pass
// through as well.
func (h *httpHandler) forward(w http.ResponseWriter, r *http.Request, addr string) {
	// Agents of one cluster share the tls block: a node with tls.http
	// serves HTTPS only, and with verify_https_client wants this agent's
	// certificate.
	target := &url.URL{Scheme: h.agent.httpScheme(), Host: addr}
	p := &httputil.ReverseProxy{
		Transport: h.agent.forwardTransport(),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(forwardedHeader, "1")
		},
		// Streams (fs stream, logs with follow) are flushed at once.
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.writeError(w, r, codedErr(http.StatusBadGateway, "forward to node at %s: %v", addr, err))
		},
	}
	p.ServeHTTP(w, r)
}

// forwardTransport is what requests to other nodes' HTTP APIs travel
// on: Go's default, or, with tls.http, one that presents this agent's
// certificate and checks the node's against the CA.
func (a *Agent) forwardTransport() http.RoundTripper {
	if !a.config.TLS.EnableHTTP {
		return http.DefaultTransport
	}
	a.forwardOnce.Do(func() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = a.tls.OutgoingHTTP()
		a.forwardRT = t
	})
	return a.forwardRT
}
