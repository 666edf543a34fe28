package agent

import (
	"net/http"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// aclBootstrapRequest answers PUT/POST /v1/acl/bootstrap. The body, when
// there is one, may carry the operator's chosen BootstrapSecret.
func (h *httpHandler) aclBootstrapRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var args structs.ACLTokenBootstrapRequest
	if r.ContentLength != 0 {
		var body api.BootstrapRequest
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		args.BootstrapSecret = body.BootstrapSecret
	}
	h.parseWrite(r, &args.WriteRequest)
	var reply structs.ACLTokenUpsertResponse
	if err := h.agent.rpc("ACL.Bootstrap", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	if len(reply.Tokens) == 0 {
		return nil, codedErr(http.StatusInternalServerError, "bootstrap returned no token")
	}
	return reply.Tokens[0], nil
}

// aclPoliciesRequest answers GET /v1/acl/policies.
func (h *httpHandler) aclPoliciesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ACLPolicyListRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.ACLPolicyListResponse
	if err := h.agent.rpc("ACL.ListPolicies", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return reply.Policies, nil
}

// aclPolicySpecificRequest answers /v1/acl/policy/:name: GET reads,
// PUT/POST writes, DELETE deletes.
func (h *httpHandler) aclPolicySpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/acl/policy/")
	if name == "" || strings.Contains(name, "/") {
		return nil, codedErr(http.StatusBadRequest, "Missing or invalid policy name in %q", r.URL.Path)
	}
	switch {
	case r.Method == http.MethodGet:
		var args structs.ACLPolicySpecificRequest
		if err := h.parseQuery(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		args.Name = name
		var reply structs.SingleACLPolicyResponse
		if err := h.agent.rpc("ACL.GetPolicy", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setMeta(w, &reply.QueryMeta)
		if reply.Policy == nil {
			return nil, codedErr(http.StatusNotFound, "ACL policy not found")
		}
		return reply.Policy, nil
	case isWrite(r):
		var body api.ACLPolicy
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if body.Name != name {
			return nil, codedErr(http.StatusBadRequest, "Policy name does not match request path: the URL names %q, the body %q", name, body.Name)
		}
		p := &structs.ACLPolicy{Name: body.Name, Description: body.Description, Rules: body.Rules}
		if body.JobACL != nil {
			p.JobACL = &structs.JobACL{Namespace: body.JobACL.Namespace, JobID: body.JobACL.JobID, Group: body.JobACL.Group, Task: body.JobACL.Task}
		}
		args := structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{p}}
		h.parseWrite(r, &args.WriteRequest)
		var reply structs.GenericResponse
		if err := h.agent.rpc("ACL.UpsertPolicies", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return handled{}, nil
	case r.Method == http.MethodDelete:
		args := structs.ACLPolicyDeleteRequest{Names: []string{name}}
		h.parseWrite(r, &args.WriteRequest)
		var reply structs.GenericResponse
		if err := h.agent.rpc("ACL.DeletePolicies", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return handled{}, nil
	}
	return nil, methodNotAllowed()
}

// aclTokensRequest answers GET /v1/acl/tokens.
func (h *httpHandler) aclTokensRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ACLTokenListRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	args.GlobalOnly = r.URL.Query().Get("global") == "true"
	var reply structs.ACLTokenListResponse
	if err := h.agent.rpc("ACL.ListTokens", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return reply.Tokens, nil
}

// aclTokenCreateRequest answers PUT/POST /v1/acl/token (create).
func (h *httpHandler) aclTokenCreateRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	return h.aclTokenUpsert(w, r, "")
}

// aclTokenSpecificRequest answers /v1/acl/token/:accessor (GET, PUT/POST
// update or upload, DELETE), /v1/acl/token/self, /v1/acl/token/onetime
// and /v1/acl/token/onetime/exchange.
func (h *httpHandler) aclTokenSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/acl/token/")
	switch rest {
	case "self":
		if r.Method != http.MethodGet {
			return nil, methodNotAllowed()
		}
		return h.aclTokenGet(w, r, "")
	case "onetime":
		if !isWrite(r) {
			return nil, methodNotAllowed()
		}
		var args structs.OneTimeTokenUpsertRequest
		h.parseWrite(r, &args.WriteRequest)
		var reply structs.OneTimeTokenUpsertResponse
		if err := h.agent.rpc("ACL.UpsertOneTimeToken", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return struct{ OneTimeToken *structs.OneTimeToken }{reply.OneTimeToken}, nil
	case "onetime/exchange":
		if !isWrite(r) {
			return nil, methodNotAllowed()
		}
		var body api.OneTimeTokenExchangeRequest
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		args := structs.OneTimeTokenExchangeRequest{OneTimeSecretID: body.OneTimeSecretID}
		h.parseWrite(r, &args.WriteRequest)
		var reply structs.OneTimeTokenExchangeResponse
		if err := h.agent.rpc("ACL.ExchangeOneTimeToken", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return struct{ Token *structs.ACLToken }{reply.Token}, nil
	}
	if rest == "" || strings.Contains(rest, "/") {
		return nil, codedErr(http.StatusBadRequest, "Missing or invalid token accessor ID in %q", r.URL.Path)
	}
	switch {
	case r.Method == http.MethodGet:
		return h.aclTokenGet(w, r, rest)
	case isWrite(r):
		return h.aclTokenUpsert(w, r, rest)
	case r.Method == http.MethodDelete:
		args := structs.ACLTokenDeleteRequest{AccessorIDs: []string{rest}}
		h.parseWrite(r, &args.WriteRequest)
		var reply structs.GenericResponse
		if err := h.agent.rpc("ACL.DeleteTokens", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return handled{}, nil
	}
	return nil, methodNotAllowed()
}

// aclTokenGet reads a token by accessor ID, or the caller's own ("").
func (h *httpHandler) aclTokenGet(w http.ResponseWriter, r *http.Request, accessor string) (any, error) {
	var q structs.QueryOptions
	if err := h.parseQuery(r, &q); err != nil {
		return nil, err
	}
	if accessor == "" {
		args := structs.ResolveACLTokenRequest{SecretID: q.AuthToken, QueryOptions: q}
		var reply structs.ResolveACLTokenResponse
		if err := h.agent.rpc("ACL.ResolveToken", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		if reply.Token == nil {
			return nil, codedErr(http.StatusNotFound, "ACL token not found")
		}
		setMeta(w, &reply.QueryMeta)
		return reply.Token, nil
	}
	args := structs.ACLTokenSpecificRequest{AccessorID: accessor, QueryOptions: q}
	var reply structs.SingleACLTokenResponse
	if err := h.agent.rpc("ACL.GetToken", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	if reply.Token == nil {
		return nil, codedErr(http.StatusNotFound, "ACL token not found")
	}
	return reply.Token, nil
}

// aclTokenUpsert creates (accessor ""), updates or uploads a token.
func (h *httpHandler) aclTokenUpsert(w http.ResponseWriter, r *http.Request, accessor string) (any, error) {
	var body api.ACLToken
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if accessor != "" && body.AccessorID != "" && body.AccessorID != accessor {
		return nil, codedErr(http.StatusBadRequest, "Token accessor ID does not match request path: the URL names %q, the body %q", accessor, body.AccessorID)
	}
	t := &structs.ACLToken{
		AccessorID: accessor, SecretID: body.SecretID, Name: body.Name, Type: body.Type,
		Policies: body.Policies, Global: body.Global, ExpirationTTL: body.ExpirationTTL,
	}
	if body.ExpirationTime != nil {
		exp := body.ExpirationTime.UTC()
		t.ExpirationTime = &exp
	}
	for _, link := range body.Roles {
		if link != nil {
			t.Roles = append(t.Roles, &structs.ACLTokenRoleLink{ID: link.ID, Name: link.Name})
		}
	}
	args := structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{t}}
	h.parseWrite(r, &args.WriteRequest)
	var reply structs.ACLTokenUpsertResponse
	if err := h.agent.rpc("ACL.UpsertTokens", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	if len(reply.Tokens) == 0 {
		return nil, codedErr(http.StatusInternalServerError, "token write returned no token")
	}
	return reply.Tokens[0], nil
}

// aclRolesRequest answers GET /v1/acl/roles.
func (h *httpHandler) aclRolesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ACLRolesListRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.ACLRolesListResponse
	if err := h.agent.rpc("ACL.ListRoles", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	return reply.ACLRoles, nil
}

// aclRoleCreateRequest answers PUT/POST /v1/acl/role (create).
func (h *httpHandler) aclRoleCreateRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	return h.aclRoleUpsert(w, r, "")
}

// aclRoleSpecificRequest answers /v1/acl/role/:id (GET, PUT/POST,
// DELETE) and GET /v1/acl/role/name/:name.
func (h *httpHandler) aclRoleSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/acl/role/")
	if name, ok := strings.CutPrefix(rest, "name/"); ok {
		if r.Method != http.MethodGet {
			return nil, methodNotAllowed()
		}
		var args structs.ACLRoleByNameRequest
		if err := h.parseQuery(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		args.RoleName = name
		var reply structs.ACLRoleByIDResponse
		if err := h.agent.rpc("ACL.GetRoleByName", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setMeta(w, &reply.QueryMeta)
		if reply.ACLRole == nil {
			return nil, codedErr(http.StatusNotFound, "ACL role not found")
		}
		return reply.ACLRole, nil
	}
	if rest == "" || strings.Contains(rest, "/") {
		return nil, codedErr(http.StatusBadRequest, "Missing or invalid role ID in %q", r.URL.Path)
	}
	switch {
	case r.Method == http.MethodGet:
		var args structs.ACLRoleByIDRequest
		if err := h.parseQuery(r, &args.QueryOptions); err != nil {
			return nil, err
		}
		args.RoleID = rest
		var reply structs.ACLRoleByIDResponse
		if err := h.agent.rpc("ACL.GetRoleByID", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setMeta(w, &reply.QueryMeta)
		if reply.ACLRole == nil {
			return nil, codedErr(http.StatusNotFound, "ACL role not found")
		}
		return reply.ACLRole, nil
	case isWrite(r):
		return h.aclRoleUpsert(w, r, rest)
	case r.Method == http.MethodDelete:
		args := structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{rest}}
		h.parseWrite(r, &args.WriteRequest)
		var reply structs.GenericResponse
		if err := h.agent.rpc("ACL.DeleteRolesByID", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return handled{}, nil
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) aclRoleUpsert(w http.ResponseWriter, r *http.Request, id string) (any, error) {
	var body api.ACLRole
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if id != "" && body.ID != id {
		return nil, codedErr(http.StatusBadRequest, "ACL role ID does not match request path: the URL names %q, the body %q", id, body.ID)
	}
	if id == "" && body.ID != "" {
		return nil, codedErr(http.StatusBadRequest, "Cannot create an ACL role with an ID: the server assigns it")
	}
	role := &structs.ACLRole{ID: body.ID, Name: body.Name, Description: body.Description}
	for _, p := range body.Policies {
		if p != nil {
			role.Policies = append(role.Policies, &structs.ACLRolePolicyLink{Name: p.Name})
		}
	}
	args := structs.ACLRolesUpsertRequest{Roles: []*structs.ACLRole{role}}
	h.parseWrite(r, &args.WriteRequest)
	var reply structs.ACLRolesUpsertResponse
	if err := h.agent.rpc("ACL.UpsertRoles", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, reply.Index)
	if len(reply.Roles) == 0 {
		return nil, codedErr(http.StatusInternalServerError, "role write returned no role")
	}
	return reply.Roles[0], nil
}
