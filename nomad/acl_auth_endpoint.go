package nomad

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/auth"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// loginTimeout bounds a login, including fetching a JWKS or an OIDC
// discovery document.
const loginTimeout = 30 * time.Second

// tokenTTLBounds are the bounds of token TTLs: the agent's acl block, or
// Nomad's defaults.
func (s *Server) tokenTTLBounds() (time.Duration, time.Duration) {
	lo, hi := s.config.ACLTokenMinExpirationTTL, s.config.ACLTokenMaxExpirationTTL
	if lo <= 0 {
		lo = structs.MinACLTokenExpirationTTL
	}
	if hi <= 0 {
		hi = structs.MaxACLTokenExpirationTTL
	}
	return lo, hi
}

// UpsertAuthMethods creates or updates auth methods. An update names
// only what changes; the rest is kept. At most one method is the default.
func (a *ACL) UpsertAuthMethods(args *structs.ACLAuthMethodUpsertRequest, reply *structs.ACLAuthMethodUpsertResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.UpsertAuthMethods", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.AuthMethods) == 0 {
		return structs.NewBadRequest("must specify as least one auth method")
	}
	st := a.srv.State()
	lo, hi := a.srv.tokenTTLBounds()
	now := time.Now().UTC()
	defaults := map[string]bool{}
	for i, m := range args.AuthMethods {
		if m == nil {
			return structs.NewBadRequest("must specify as least one auth method")
		}
		existing, err := st.ACLAuthMethodByName(nil, m.Name)
		if err != nil {
			return err
		}
		m.Merge(existing)
		if m.CreateTime.IsZero() {
			m.CreateTime = now
		}
		m.ModifyTime = now
		if m.TokenNameFormat == "" {
			m.TokenNameFormat = structs.DefaultACLAuthMethodTokenNameFormat
		}
		var errs structs.MultiError
		errs.Add(m.Validate(lo, hi))
		if m.Type == structs.ACLAuthMethodTypeJWT && m.Config != nil {
			if err := auth.CheckJWTConfig(m.Config); err != nil {
				errs.Add(fmt.Errorf("invalid config: %w", err))
			}
		}
		if _, err := auth.TokenName(m, &structs.ACLAuthClaims{}); err != nil {
			errs.Add(err)
		}
		if err := errs.ErrorOrNil(); err != nil {
			return structs.NewBadRequest(fmt.Sprintf("auth method %d invalid: %v", i, err))
		}
		if m.Default {
			defaults[m.Name] = true
			if len(defaults) > 1 {
				return structs.NewBadRequest("only one auth method may be the default")
			}
			other, err := st.DefaultACLAuthMethod(nil)
			if err != nil {
				return err
			}
			if other != nil && other.Name != m.Name {
				return structs.NewBadRequest(fmt.Sprintf("default method already exists: %v", other.Name))
			}
		}
		m.SetHash()
	}
	_, index, err := a.srv.raftApply(structs.ACLAuthMethodsUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	st = a.srv.State()
	for _, m := range args.AuthMethods {
		stored, err := st.ACLAuthMethodByName(nil, m.Name)
		if err != nil {
			return err
		}
		if stored != nil {
			reply.AuthMethods = append(reply.AuthMethods, stored.Sanitize())
		}
	}
	return nil
}

// DeleteAuthMethods deletes auth methods by name, with their binding
// rules.
func (a *ACL) DeleteAuthMethods(args *structs.ACLAuthMethodDeleteRequest, reply *structs.GenericResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.DeleteAuthMethods", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Names) == 0 {
		return structs.NewBadRequest("must specify as least one auth method")
	}
	_, index, err := a.srv.raftApply(structs.ACLAuthMethodsDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListAuthMethods lists auth methods (name, type, default); anyone may,
// so a login screen can offer them.
func (a *ACL) ListAuthMethods(args *structs.ACLAuthMethodListRequest, reply *structs.ACLAuthMethodListResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.ListAuthMethods", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		methods, err := st.ACLAuthMethods(ws)
		if err != nil {
			return 0, err
		}
		reply.AuthMethods = make([]*structs.ACLAuthMethodStub, 0, len(methods))
		for _, m := range methods {
			reply.AuthMethods = append(reply.AuthMethods, m.Stub())
		}
		return maxIndex(st, state.TableACLAuthMethods)
	})
}

// GetAuthMethod reads one auth method, its client secret redacted.
func (a *ACL) GetAuthMethod(args *structs.ACLAuthMethodGetRequest, reply *structs.ACLAuthMethodGetResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.GetAuthMethod", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		m, err := st.ACLAuthMethodByName(ws, args.MethodName)
		if err != nil {
			return 0, err
		}
		reply.AuthMethod = m.Sanitize()
		if m != nil {
			return m.ModifyIndex, nil
		}
		return maxIndex(st, state.TableACLAuthMethods)
	})
}

// UpsertBindingRules creates (no ID) or updates binding rules. An update
// names only what changes and cannot move a rule to another method.
func (a *ACL) UpsertBindingRules(args *structs.ACLBindingRulesUpsertRequest, reply *structs.ACLBindingRulesUpsertResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.UpsertBindingRules", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.ACLBindingRules) == 0 {
		return structs.NewBadRequest("must specify as least one binding rule")
	}
	st := a.srv.State()
	now := time.Now().UTC()
	for i, r := range args.ACLBindingRules {
		if r == nil {
			return structs.NewBadRequest("must specify as least one binding rule")
		}
		if r.ID != "" {
			existing, err := st.ACLBindingRuleByID(nil, r.ID)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewBadRequest(fmt.Sprintf("cannot find binding rule %s", r.ID))
			}
			if r.AuthMethod != "" && r.AuthMethod != existing.AuthMethod {
				return structs.NewBadRequest("cannot update auth method for binding rule, create a new rule instead")
			}
			r.Merge(existing)
		}
		if err := r.Validate(); err != nil {
			return structs.NewBadRequest(fmt.Sprintf("binding rule %d invalid: %v", i, err))
		}
		method, err := st.ACLAuthMethodByName(nil, r.AuthMethod)
		if err != nil {
			return err
		}
		if method == nil {
			return structs.NewBadRequest(fmt.Sprintf("ACL auth method %s not found", r.AuthMethod))
		}
		if r.ID == "" {
			r.ID = structs.GenerateUUID()
			r.CreateTime = now
		}
		r.ModifyTime = now
		r.SetHash()
	}
	_, index, err := a.srv.raftApply(structs.ACLBindingRulesUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	st = a.srv.State()
	for _, r := range args.ACLBindingRules {
		stored, err := st.ACLBindingRuleByID(nil, r.ID)
		if err != nil {
			return err
		}
		if stored != nil {
			reply.ACLBindingRules = append(reply.ACLBindingRules, stored)
		}
	}
	return nil
}

// DeleteBindingRules deletes binding rules by ID.
func (a *ACL) DeleteBindingRules(args *structs.ACLBindingRulesDeleteRequest, reply *structs.GenericResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.DeleteBindingRules", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.ACLBindingRuleIDs) == 0 {
		return structs.NewBadRequest("must specify as least one binding rule")
	}
	_, index, err := a.srv.raftApply(structs.ACLBindingRulesDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListBindingRules lists binding rules.
func (a *ACL) ListBindingRules(args *structs.ACLBindingRulesListRequest, reply *structs.ACLBindingRulesListResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.ListBindingRules", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		rules, err := st.ACLBindingRules(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.ACLBindingRules = make([]*structs.ACLBindingRuleListStub, 0, len(rules))
		for _, r := range rules {
			reply.ACLBindingRules = append(reply.ACLBindingRules, r.Stub())
		}
		return maxIndex(st, state.TableACLBindingRules)
	})
}

// GetBindingRule reads one binding rule.
func (a *ACL) GetBindingRule(args *structs.ACLBindingRuleRequest, reply *structs.ACLBindingRuleResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.GetBindingRule", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		r, err := st.ACLBindingRuleByID(ws, args.ACLBindingRuleID)
		if err != nil {
			return 0, err
		}
		reply.ACLBindingRule = r
		if r != nil {
			return r.ModifyIndex, nil
		}
		return maxIndex(st, state.TableACLBindingRules)
	})
}

// stateLookup finds roles and policies for the binder.
type stateLookup struct{ st *state.StateStore }

func (l stateLookup) ACLRoleByName(name string) (*structs.ACLRole, error) {
	return l.st.ACLRoleByName(nil, name)
}

func (l stateLookup) ACLPolicyByName(name string) (*structs.ACLPolicy, error) {
	return l.st.ACLPolicyByName(nil, name)
}

// Login trades a JWT for an ACL token through a JWT auth method: the
// token is verified against the method's keys and bounds, its claims are
// mapped and matched against the method's binding rules, and the minted
// token carries what the matching rules bind, for the method's
// MaxTokenTTL. Anyone may call it; the JWT is the credential.
func (a *ACL) Login(args *structs.ACLLoginRequest, reply *structs.ACLLoginResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.Login", args.WriteRequest, args, reply); done {
		return err
	}
	switch {
	case args.AuthMethodName == "":
		return structs.NewBadRequest("invalid login request: missing auth method name")
	case args.LoginToken == "":
		return structs.NewBadRequest("invalid login request: missing login token")
	}
	st := a.srv.State()
	method, err := st.ACLAuthMethodByName(nil, args.AuthMethodName)
	if err != nil {
		return err
	}
	if method == nil {
		return structs.NewBadRequest(fmt.Sprintf("auth-method %q not found", args.AuthMethodName))
	}
	if method.Type != structs.ACLAuthMethodTypeJWT {
		return structs.NewBadRequest(fmt.Sprintf("auth-method %q is of type %s: login with a token needs a JWT auth method (OIDC login is not supported by nomadq)", method.Name, method.Type))
	}
	ctx, cancel := context.WithTimeout(context.Background(), loginTimeout)
	defer cancel()
	claims, err := auth.ValidateJWT(ctx, args.LoginToken, method.Config, time.Now)
	if err != nil {
		return structs.NewErrRPCCodedf(http.StatusUnauthorized, "unable to validate provided token: %v", err)
	}
	selectorData, err := auth.SelectorData(method.Config, claims)
	if err != nil {
		return structs.NewBadRequest(fmt.Sprintf("login with auth-method %q: %v", method.Name, err))
	}
	if method.Config.VerboseLogging {
		claimsJSON, _ := json.Marshal(claims)
		mappedJSON, _ := json.Marshal(selectorData)
		a.srv.logger.Debug("ACL login claims", "auth_method", method.Name, "token_claims", string(claimsJSON), "mapped_claims", string(mappedJSON))
	}
	rules, err := st.ACLBindingRulesByAuthMethod(nil, method.Name)
	if err != nil {
		return err
	}
	bindings, err := auth.Bind(rules, selectorData, method.Config.ClaimMappings, stateLookup{st})
	if err != nil {
		return structs.NewBadRequest(fmt.Sprintf("login with auth-method %q: %v", method.Name, err))
	}
	if bindings.None() {
		return structs.NewBadRequest("no role or policy bindings matched")
	}
	name, err := auth.TokenName(method, selectorData)
	if err != nil {
		return err
	}
	token := &structs.ACLToken{Name: name, Global: method.IsGlobal(), ExpirationTTL: method.MaxTokenTTL, Type: structs.ACLClientToken}
	if bindings.Management {
		token.Type = structs.ACLManagementToken
	} else {
		token.Policies, token.Roles = bindings.Policies, bindings.Roles
	}
	upsert := structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{token}, WriteRequest: args.WriteRequest}
	var out structs.ACLTokenUpsertResponse
	// This server is the leader (forward above) and the login is its
	// own authorization: store the token without a management check.
	if err := a.upsertTokens(&upsert, &out); err != nil {
		return err
	}
	if len(out.Tokens) != 1 || out.Tokens[0] == nil {
		return fmt.Errorf("login with auth-method %q: the minted token was not stored", method.Name)
	}
	reply.ACLToken = out.Tokens[0]
	reply.Index = out.Index
	return nil
}
