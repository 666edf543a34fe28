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
	var reply structs.ACLTokenUpsertResponse
	if err := h.write(w, r, "ACL.Bootstrap", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
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
	var reply structs.ACLPolicyListResponse
	if err := h.query(w, r, "ACL.ListPolicies", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
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
		args.Name = name
		var reply structs.SingleACLPolicyResponse
		if err := h.query(w, r, "ACL.GetPolicy", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
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
		var reply structs.GenericResponse
		if err := h.write(w, r, "ACL.UpsertPolicies", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
		return handled{}, nil
	case r.Method == http.MethodDelete:
		args := structs.ACLPolicyDeleteRequest{Names: []string{name}}
		var reply structs.GenericResponse
		if err := h.write(w, r, "ACL.DeletePolicies", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
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
	args.GlobalOnly = r.URL.Query().Get("global") == "true"
	var reply structs.ACLTokenListResponse
	if err := h.query(w, r, "ACL.ListTokens", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
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
		var reply structs.OneTimeTokenUpsertResponse
		if err := h.write(w, r, "ACL.UpsertOneTimeToken", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
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
		var reply structs.OneTimeTokenExchangeResponse
		if err := h.write(w, r, "ACL.ExchangeOneTimeToken", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
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
		var reply structs.GenericResponse
		if err := h.write(w, r, "ACL.DeleteTokens", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
		return handled{}, nil
	}
	return nil, methodNotAllowed()
}

// aclTokenGet reads a token by accessor ID, or the caller's own ("").
func (h *httpHandler) aclTokenGet(w http.ResponseWriter, r *http.Request, accessor string) (any, error) {
	if accessor == "" {
		return h.aclTokenSelf(w, r)
	}
	args := structs.ACLTokenSpecificRequest{AccessorID: accessor}
	var reply structs.SingleACLTokenResponse
	if err := h.query(w, r, "ACL.GetToken", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Token == nil {
		return nil, codedErr(http.StatusNotFound, "ACL token not found")
	}
	return reply.Token, nil
}

// aclTokenSelf reads the caller's own token. Unlike a read by accessor,
// a 404 carries no index headers.
func (h *httpHandler) aclTokenSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	var q structs.QueryOptions
	if err := h.parseQuery(r, &q); err != nil {
		return nil, err
	}
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
	var reply structs.ACLTokenUpsertResponse
	if err := h.write(w, r, "ACL.UpsertTokens", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
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
	var reply structs.ACLRolesListResponse
	if err := h.query(w, r, "ACL.ListRoles", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
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
		args.RoleName = name
		var reply structs.ACLRoleByIDResponse
		if err := h.query(w, r, "ACL.GetRoleByName", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
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
		args.RoleID = rest
		var reply structs.ACLRoleByIDResponse
		if err := h.query(w, r, "ACL.GetRoleByID", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		if reply.ACLRole == nil {
			return nil, codedErr(http.StatusNotFound, "ACL role not found")
		}
		return reply.ACLRole, nil
	case isWrite(r):
		return h.aclRoleUpsert(w, r, rest)
	case r.Method == http.MethodDelete:
		args := structs.ACLRolesDeleteByIDRequest{ACLRoleIDs: []string{rest}}
		var reply structs.GenericResponse
		if err := h.write(w, r, "ACL.DeleteRolesByID", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
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
	var reply structs.ACLRolesUpsertResponse
	if err := h.write(w, r, "ACL.UpsertRoles", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	if len(reply.Roles) == 0 {
		return nil, codedErr(http.StatusInternalServerError, "role write returned no role")
	}
	return reply.Roles[0], nil
}
