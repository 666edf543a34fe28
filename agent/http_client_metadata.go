package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/structs"
)

// nodeMetaEndpoints is what /v1/client/metadata needs of the node agent.
type nodeMetaEndpoints interface {
	NodeMeta() client.NodeMeta
	ApplyNodeMeta(updates map[string]*string) (client.NodeMeta, error)
}

func (n *nodeClient) NodeMeta() client.NodeMeta { return n.c.NodeMeta() }

func (n *nodeClient) ApplyNodeMeta(updates map[string]*string) (client.NodeMeta, error) {
	return n.c.ApplyNodeMeta(updates)
}

// maxNodeMetaBody bounds the body of a metadata update.
const maxNodeMetaBody = 1 << 20

// nodeMetaApplyBody is the body of POST /v1/client/metadata, as the
// official client sends it.
type nodeMetaApplyBody struct {
	NodeID string
	Meta   map[string]*string
}

// clientMetadataRequest serves GET (read) and POST (apply) of
// /v1/client/metadata: this agent's node, or, with a node_id of another
// node, that node through its HTTP API.
func (h *httpHandler) clientMetadataRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	var body nodeMetaApplyBody
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost, http.MethodPut:
		// The body is read twice: here, and by the node it may be
		// forwarded to.
		if r.Body == nil {
			return nil, errEmptyBody
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, maxNodeMetaBody+1))
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "read request body: %v", err)
		}
		if len(raw) > maxNodeMetaBody {
			return nil, codedErr(http.StatusRequestEntityTooLarge, "node metadata request body is over %d bytes", maxNodeMetaBody)
		}
		// Not decodeBody: a null value here means "unset this key".
		if err := json.Unmarshal(raw, &body); err != nil {
			return nil, codedErr(http.StatusBadRequest, "Failed to decode request body: %v", err)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	default:
		return nil, methodNotAllowed()
	}
	nodeID := r.URL.Query().Get("node_id")
	if nodeID == "" {
		nodeID = body.NodeID
	}
	if nodeID != "" && (h.agent.client == nil || nodeID != h.agent.client.NodeID()) {
		if r.Header.Get(forwardedHeader) != "" {
			return nil, codedErr(http.StatusNotFound, "Unknown node %q: not served by this agent", nodeID)
		}
		node, err := h.metadataNode(r, nodeID)
		if err != nil {
			return nil, err
		}
		h.forward(w, r, node.HTTPAddr)
		return handled{}, nil
	}
	if h.agent.client == nil {
		return nil, codedErr(http.StatusBadRequest, "No local Node and node_id not provided")
	}
	ce, ok := h.agent.client.(nodeMetaEndpoints)
	if !ok {
		return nil, codedErr(http.StatusNotImplemented, "This agent's client (simulated nodes) does not serve node metadata")
	}
	if r.Method == http.MethodGet {
		return ce.NodeMeta(), nil
	}
	out, err := ce.ApplyNodeMeta(body.Meta)
	if errors.Is(err, client.ErrBadNodeMeta) {
		return nil, codedErr(http.StatusBadRequest, "%v", err)
	}
	if err != nil {
		return nil, codedErr(http.StatusInternalServerError, "%v", err)
	}
	return out, nil
}

// metadataNode finds the node a node_id names (a full ID), for forwarding;
// reading it takes node:read, as the route does.
func (h *httpHandler) metadataNode(r *http.Request, nodeID string) (*structs.Node, error) {
	if len(nodeID) != 36 {
		return nil, codedErr(http.StatusBadRequest, "node_id %q is not a full node ID", nodeID)
	}
	node, err := h.allocNode(r, nodeID)
	switch {
	case err != nil:
		return nil, err
	case node == nil:
		return nil, codedErr(http.StatusNotFound, "Unknown node %q", nodeID)
	case node.Status == structs.NodeStatusDown:
		return nil, codedErr(http.StatusBadRequest, "node %q is down", nodeID)
	case node.HTTPAddr == "":
		return nil, codedErr(http.StatusInternalServerError, "node %q advertises no HTTP address", nodeID)
	}
	return node, nil
}
