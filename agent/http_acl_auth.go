package agent

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// aclAuthMethodsRequest answers GET /v1/acl/auth-methods.
func (h *httpHandler) aclAuthMethodsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ACLAuthMethodListRequest
	var reply structs.ACLAuthMethodListResponse
	if err := h.query(w, r, "ACL.ListAuthMethods", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	return reply.AuthMethods, nil
}

// aclAuthMethodCreateRequest answers PUT/POST /v1/acl/auth-method.
func (h *httpHandler) aclAuthMethodCreateRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	return h.aclAuthMethodUpsert(w, r, "")
}

// aclAuthMethodSpecificRequest answers /v1/acl/auth-method/:name: GET
// reads, PUT/POST updates, DELETE deletes.
func (h *httpHandler) aclAuthMethodSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	name := strings.TrimPrefix(r.URL.Path, "/v1/acl/auth-method/")
	if name == "" || strings.Contains(name, "/") {
		return nil, codedErr(http.StatusBadRequest, "Missing or invalid auth method name in %q", r.URL.Path)
	}
	switch {
	case r.Method == http.MethodGet:
		var args structs.ACLAuthMethodGetRequest
		args.MethodName = name
		var reply structs.ACLAuthMethodGetResponse
		if err := h.query(w, r, "ACL.GetAuthMethod", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		if reply.AuthMethod == nil {
			return nil, codedErr(http.StatusNotFound, "ACL auth-method not found")
		}
		return authMethodJSON(reply.AuthMethod)
	case isWrite(r):
		return h.aclAuthMethodUpsert(w, r, name)
	case r.Method == http.MethodDelete:
		args := structs.ACLAuthMethodDeleteRequest{Names: []string{name}}
		var reply structs.GenericResponse
		if err := h.write(w, r, "ACL.DeleteAuthMethods", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
		return handled{}, nil
	}
	return nil, methodNotAllowed()
}

// aclAuthMethodUpsert creates (name "") or updates the method the body
// describes.
func (h *httpHandler) aclAuthMethodUpsert(w http.ResponseWriter, r *http.Request, name string) (any, error) {
	var body api.ACLAuthMethod
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if name != "" && body.Name != name {
		return nil, codedErr(http.StatusBadRequest, "ACL auth-method name does not match request path: the URL names %q, the body %q", name, body.Name)
	}
	m, err := authMethodFromAPI(&body)
	if err != nil {
		return nil, err
	}
	args := structs.ACLAuthMethodUpsertRequest{AuthMethods: []*structs.ACLAuthMethod{m}}
	var reply structs.ACLAuthMethodUpsertResponse
	if err := h.write(w, r, "ACL.UpsertAuthMethods", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	if len(reply.AuthMethods) == 0 {
		return nil, codedErr(http.StatusInternalServerError, "auth method write returned no auth method")
	}
	return authMethodJSON(reply.AuthMethods[0])
}

func authMethodFromAPI(in *api.ACLAuthMethod) (*structs.ACLAuthMethod, error) {
	m := &structs.ACLAuthMethod{
		Name: in.Name, Type: in.Type, TokenLocality: in.TokenLocality, TokenNameFormat: in.TokenNameFormat,
		MaxTokenTTL: in.MaxTokenTTL, Default: in.Default,
	}
	if c := in.Config; c != nil {
		m.Config = &structs.ACLAuthMethodConfig{
			JWTValidationPubKeys: c.JWTValidationPubKeys, JWKSURL: c.JWKSURL, OIDCDiscoveryURL: c.OIDCDiscoveryURL,
			OIDCClientID: c.OIDCClientID, OIDCClientSecret: c.OIDCClientSecret, OIDCEnablePKCE: c.OIDCEnablePKCE,
			OIDCDisableUserInfo: c.OIDCDisableUserInfo, OIDCScopes: c.OIDCScopes, BoundAudiences: c.BoundAudiences,
			BoundIssuer: c.BoundIssuer, AllowedRedirectURIs: c.AllowedRedirectURIs, DiscoveryCaPem: c.DiscoveryCaPem,
			JWKSCACert: c.JWKSCACert, SigningAlgs: c.SigningAlgs, ExpirationLeeway: c.ExpirationLeeway,
			NotBeforeLeeway: c.NotBeforeLeeway, ClockSkewLeeway: c.ClockSkewLeeway, ClaimMappings: c.ClaimMappings,
			ListClaimMappings: c.ListClaimMappings, VerboseLogging: c.VerboseLogging,
		}
		if c.OIDCClientAssertion != nil {
			raw, err := json.Marshal(c.OIDCClientAssertion)
			if err != nil {
				return nil, codedErr(http.StatusBadRequest, "Invalid OIDCClientAssertion: %v", err)
			}
			m.Config.OIDCClientAssertion = raw
		}
	}
	return m, nil
}

// authMethodJSON encodes a method the way Nomad does, with MaxTokenTTL
// and the leeways as duration strings (the api module's form).
func authMethodJSON(m *structs.ACLAuthMethod) (any, error) {
	out := api.ACLAuthMethod{
		Name: m.Name, Type: m.Type, TokenLocality: m.TokenLocality, TokenNameFormat: m.TokenNameFormat,
		MaxTokenTTL: m.MaxTokenTTL, Default: m.Default, CreateTime: m.CreateTime, ModifyTime: m.ModifyTime,
		CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex,
	}
	if c := m.Config; c != nil {
		out.Config = &api.ACLAuthMethodConfig{
			JWTValidationPubKeys: c.JWTValidationPubKeys, JWKSURL: c.JWKSURL, OIDCDiscoveryURL: c.OIDCDiscoveryURL,
			OIDCClientID: c.OIDCClientID, OIDCClientSecret: c.OIDCClientSecret, OIDCEnablePKCE: c.OIDCEnablePKCE,
			OIDCDisableUserInfo: c.OIDCDisableUserInfo, OIDCScopes: c.OIDCScopes, BoundAudiences: c.BoundAudiences,
			BoundIssuer: c.BoundIssuer, AllowedRedirectURIs: c.AllowedRedirectURIs, DiscoveryCaPem: c.DiscoveryCaPem,
			JWKSCACert: c.JWKSCACert, SigningAlgs: c.SigningAlgs, ExpirationLeeway: c.ExpirationLeeway,
			NotBeforeLeeway: c.NotBeforeLeeway, ClockSkewLeeway: c.ClockSkewLeeway, ClaimMappings: c.ClaimMappings,
			ListClaimMappings: c.ListClaimMappings, VerboseLogging: c.VerboseLogging,
		}
	}
	buf, err := json.Marshal(&out)
	if err != nil {
		return nil, err
	}
	return rawJSON(buf), nil
}

// aclBindingRulesRequest answers GET /v1/acl/binding-rules.
func (h *httpHandler) aclBindingRulesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.ACLBindingRulesListRequest
	var reply structs.ACLBindingRulesListResponse
	if err := h.query(w, r, "ACL.ListBindingRules", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	return reply.ACLBindingRules, nil
}

// aclBindingRuleCreateRequest answers PUT/POST /v1/acl/binding-rule.
func (h *httpHandler) aclBindingRuleCreateRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	return h.aclBindingRuleUpsert(w, r, "")
}

// aclBindingRuleSpecificRequest answers /v1/acl/binding-rule/:id (GET,
// PUT/POST, DELETE).
func (h *httpHandler) aclBindingRuleSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/acl/binding-rule/")
	if id == "" || strings.Contains(id, "/") {
		return nil, codedErr(http.StatusBadRequest, "Missing or invalid binding rule ID in %q", r.URL.Path)
	}
	switch {
	case r.Method == http.MethodGet:
		var args structs.ACLBindingRuleRequest
		args.ACLBindingRuleID = id
		var reply structs.ACLBindingRuleResponse
		if err := h.query(w, r, "ACL.GetBindingRule", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		if reply.ACLBindingRule == nil {
			return nil, codedErr(http.StatusNotFound, "ACL binding rule not found")
		}
		return reply.ACLBindingRule, nil
	case isWrite(r):
		return h.aclBindingRuleUpsert(w, r, id)
	case r.Method == http.MethodDelete:
		args := structs.ACLBindingRulesDeleteRequest{ACLBindingRuleIDs: []string{id}}
		var reply structs.GenericResponse
		if err := h.write(w, r, "ACL.DeleteBindingRules", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
		return handled{}, nil
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) aclBindingRuleUpsert(w http.ResponseWriter, r *http.Request, id string) (any, error) {
	var body api.ACLBindingRule
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if id != "" && body.ID != id {
		return nil, codedErr(http.StatusBadRequest, "ACL binding rule ID does not match request path: the URL names %q, the body %q", id, body.ID)
	}
	if id == "" && body.ID != "" {
		return nil, codedErr(http.StatusBadRequest, "Cannot create an ACL binding rule with an ID: the server assigns it")
	}
	rule := &structs.ACLBindingRule{ID: body.ID, Description: body.Description, AuthMethod: body.AuthMethod,
		Selector: body.Selector, BindType: body.BindType, BindName: body.BindName}
	args := structs.ACLBindingRulesUpsertRequest{ACLBindingRules: []*structs.ACLBindingRule{rule}}
	var reply structs.ACLBindingRulesUpsertResponse
	if err := h.write(w, r, "ACL.UpsertBindingRules", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	if len(reply.ACLBindingRules) == 0 {
		return nil, codedErr(http.StatusInternalServerError, "binding rule write returned no binding rule")
	}
	return reply.ACLBindingRules[0], nil
}

// aclLoginRequest answers PUT/POST /v1/acl/login: a JWT for a token.
func (h *httpHandler) aclLoginRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body api.ACLLoginRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.ACLLoginRequest{AuthMethodName: body.AuthMethodName, LoginToken: body.LoginToken}
	var reply structs.ACLLoginResponse
	if err := h.write(w, r, "ACL.Login", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply.ACLToken, nil
}

// aclOIDCRequest answers /v1/acl/oidc/auth-url and
// /v1/acl/oidc/complete-auth: nomadq does not run the OIDC login flow,
// and says so rather than pretending.
func (h *httpHandler) aclOIDCRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	return nil, codedErr(http.StatusBadRequest, "%s: OIDC login is not supported by nomadq; log in with a JWT auth method through PUT /v1/acl/login (nomad login -type=JWT)", r.URL.Path)
}

// aclIdentityRequest answers /v1/acl/identity/...: PUT (or POST)
// client-introduction-token mints a client introduction token.
func (h *httpHandler) aclIdentityRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if strings.TrimPrefix(r.URL.Path, "/v1/acl/identity/") != "client-introduction-token" {
		return nil, codedErr(http.StatusNotFound, "%s: no such endpoint; /v1/acl/identity/ has client-introduction-token", r.URL.Path)
	}
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var args structs.ACLCreateClientIntroductionTokenRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	h.parseWrite(r, &args.WriteRequest)
	var reply structs.ACLCreateClientIntroductionTokenResponse
	if err := h.agent.rpc("ACL.CreateClientIntroductionToken", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	return &reply, nil
}
