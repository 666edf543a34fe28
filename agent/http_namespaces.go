package agent

import (
	"net/http"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// namespacesRequest answers GET /v1/namespaces (prefix filters by name).
func (h *httpHandler) namespacesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.NamespaceListRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.NamespaceListResponse
	if err := h.agent.rpc("Namespace.ListNamespaces", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	list, err := filterAndPage(&args.QueryOptions, reply.Namespaces, func(n *structs.Namespace) string { return n.Name }, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if list == nil {
		list = []*structs.Namespace{}
	}
	return list, nil
}

// namespaceCreateRequest answers PUT/POST /v1/namespace, where the
// official client registers a namespace named in the body.
func (h *httpHandler) namespaceCreateRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	return h.namespaceUpsert(w, r, "")
}

// namespaceSpecificRequest answers GET, PUT/POST and DELETE
// /v1/namespace/:name.
func (h *httpHandler) namespaceSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/namespace/")
	switch {
	case r.Method == http.MethodGet:
		return h.namespaceGet(w, r, name)
	case isWrite(r):
		return h.namespaceUpsert(w, r, name)
	case r.Method == http.MethodDelete:
		return h.namespaceDelete(w, r, name)
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) namespaceGet(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	args := structs.NamespaceSpecificRequest{Name: name}
	var reply structs.SingleNamespaceResponse
	if err := h.query(w, r, "Namespace.GetNamespace", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Namespace == nil {
		return nil, codedErr(http.StatusNotFound, "Namespace not found")
	}
	return reply.Namespace, nil
}

func (h *httpHandler) namespaceUpsert(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	var body api.Namespace
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if name != "" && body.Name != name {
		return nil, codedErr(http.StatusBadRequest, "Namespace name does not match request path: the URL names %q, the body %q", name, body.Name)
	}
	ns := apiNamespaceToStruct(&body)
	if err := ns.Validate(); err != nil {
		return nil, codedErr(http.StatusBadRequest, "Invalid namespace %q: %v", ns.Name, err)
	}
	args := structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{ns}}
	var reply structs.GenericResponse
	if err := h.write(w, r, "Namespace.UpsertNamespaces", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return handled{}, nil
}

func (h *httpHandler) namespaceDelete(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	args := structs.NamespaceDeleteRequest{Namespaces: []string{name}}
	var reply structs.GenericResponse
	if err := h.write(w, r, "Namespace.DeleteNamespaces", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return handled{}, nil
}

// apiNamespaceToStruct maps the client's namespace to the server's,
// keeping every field so that what cannot be honoured is refused by name.
func apiNamespaceToStruct(n *api.Namespace) *structs.Namespace {
	ns := &structs.Namespace{
		Name:                n.Name,
		Description:         n.Description,
		Quota:               n.Quota,
		Meta:                n.Meta,
		RequiredExtraClaims: n.RequiredExtraClaims,
		OptionalExtraClaims: n.OptionalExtraClaims,
	}
	if c := n.Capabilities; c != nil {
		ns.Capabilities = &structs.NamespaceCapabilities{
			EnabledTaskDrivers:   c.EnabledTaskDrivers,
			DisabledTaskDrivers:  c.DisabledTaskDrivers,
			EnabledNetworkModes:  c.EnabledNetworkModes,
			DisabledNetworkModes: c.DisabledNetworkModes,
		}
	}
	if c := n.NodePoolConfiguration; c != nil {
		ns.NodePoolConfiguration = &structs.NamespaceNodePoolConfiguration{Default: c.Default, Allowed: c.Allowed, Denied: c.Denied}
	}
	if c := n.VaultConfiguration; c != nil {
		ns.VaultConfiguration = &structs.NamespaceDefaultAllowedDenied{Default: c.Default, Allowed: c.Allowed, Denied: c.Denied}
	}
	if c := n.ConsulConfiguration; c != nil {
		ns.ConsulConfiguration = &structs.NamespaceDefaultAllowedDenied{Default: c.Default, Allowed: c.Allowed, Denied: c.Denied}
	}
	return ns
}
