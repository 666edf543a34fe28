package nomad

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// ACL is the RPC endpoint of the ACL system: bootstrap, policies, tokens,
// roles and one-time tokens.
type ACL struct {
	srv *Server
}

// errACLDisabled answers ACL calls on a cluster without ACLs, in Nomad's
// words and with its status: the request asks for something this cluster
// is not configured to do.
var errACLDisabled = structs.NewErrRPCCoded(http.StatusBadRequest, "ACL support disabled")

func (a *ACL) enabled() error {
	if !a.srv.config.ACLEnabled {
		return errACLDisabled
	}
	return nil
}

// Bootstrap writes the first management token. It works once; after that
// only with the reset index the operator wrote into the data dir's
// acl-bootstrap-reset file.
func (a *ACL) Bootstrap(args *structs.ACLTokenBootstrapRequest, reply *structs.ACLTokenUpsertResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.Bootstrap", args.WriteRequest, args, reply); done {
		return err
	}
	st := a.srv.State()
	done, err := st.ACLBootstrapIndex()
	if err != nil {
		return err
	}
	if done != 0 {
		reset := a.srv.aclBootstrapResetIndex()
		switch reset {
		case done:
			args.ResetIndex = reset
		case 0:
			return errBootstrapDone(done)
		default:
			return structs.NewErrRPCCodedf(http.StatusBadRequest, "Invalid bootstrap reset index (specified %d, reset index: %d)", reset, done)
		}
	}
	secret := structs.GenerateUUID()
	if args.BootstrapSecret != "" {
		if !structs.IsUUID(args.BootstrapSecret) {
			return structs.NewBadRequest("invalid acl token")
		}
		secret = args.BootstrapSecret
	}
	args.Token = &structs.ACLToken{
		AccessorID: structs.GenerateUUID(),
		SecretID:   secret,
		Name:       "Bootstrap Token",
		Type:       structs.ACLManagementToken,
		Global:     true,
		CreateTime: time.Now().UTC(),
	}
	args.Token.SetHash()
	_, index, err := a.srv.raftApply(structs.ACLTokenBootstrapRequestType, args)
	if errors.Is(err, state.ErrACLBootstrapDone) {
		// Another bootstrap applied between the check above and this
		// one: the caller lost a race, which is no server failure.
		return structs.NewErrRPCCoded(http.StatusBadRequest, err.Error())
	}
	if err != nil {
		return err
	}
	reply.Tokens = []*structs.ACLToken{args.Token}
	reply.Index = index
	if reset := a.srv.aclBootstrapResetPath(); reset != "" {
		_ = os.Remove(reset)
	}
	return nil
}

// errBootstrapDone refuses a bootstrap after the one at index done,
// naming the index an operator writes into the reset file.
func errBootstrapDone(done uint64) error {
	return structs.NewErrRPCCodedf(http.StatusBadRequest, "%v (reset index: %d)", state.ErrACLBootstrapDone, done)
}

// aclBootstrapResetPath is the file an operator writes a bootstrap index
// into to allow one more bootstrap ("" in dev mode, which has no data dir).
func (s *Server) aclBootstrapResetPath() string {
	if s.config.DevMode || s.config.DataDir == "" {
		return ""
	}
	return filepath.Join(s.config.DataDir, "server", structs.ACLBootstrapResetIndexFile)
}

func (s *Server) aclBootstrapResetIndex() uint64 {
	path := s.aclBootstrapResetPath()
	if path == "" {
		return 0
	}
	buf, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	i, err := strconv.ParseUint(strings.TrimSpace(string(buf)), 10, 64)
	if err != nil {
		s.logger.Warn("ignoring the ACL bootstrap reset file: it does not hold a whole number", "path", path)
		return 0
	}
	return i
}

// UpsertPolicies validates and stores policies; one invalid policy stores
// none.
func (a *ACL) UpsertPolicies(args *structs.ACLPolicyUpsertRequest, reply *structs.GenericResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.UpsertPolicies", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Policies) == 0 {
		return structs.NewBadRequest("must specify as least one policy")
	}
	for _, p := range args.Policies {
		if p == nil {
			return structs.NewBadRequest("must specify as least one policy")
		}
		if err := p.Validate(); err != nil {
			return structs.NewBadRequest(fmt.Sprintf("policy %q: %v", p.Name, err))
		}
		// Workload identities are not ACL tokens here, so a policy
		// attached to a job would grant nothing.
		if p.JobACL != nil {
			return structs.NewBadRequest(fmt.Sprintf("policy %q: field \"JobACL\" is not supported by nomadq: workload identities do not carry ACL policies", p.Name))
		}
		if _, err := acl.Parse(p.Rules); err != nil {
			return structs.NewBadRequest(fmt.Sprintf("policy %q: %v", p.Name, err))
		}
		p.SetHash()
	}
	_, index, err := a.srv.raftApply(structs.ACLPolicyUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// DeletePolicies deletes policies by name.
func (a *ACL) DeletePolicies(args *structs.ACLPolicyDeleteRequest, reply *structs.GenericResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.DeletePolicies", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Names) == 0 {
		return structs.NewBadRequest("must specify as least one policy")
	}
	_, index, err := a.srv.raftApply(structs.ACLPolicyDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListPolicies lists policies. A management token sees all; any other
// caller sees the policies its token links, directly or through its
// roles, and the anonymous caller the policy named "anonymous", as in
// Nomad.
func (a *ACL) ListPolicies(args *structs.ACLPolicyListRequest, reply *structs.ACLPolicyListResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.ListPolicies", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		caller, err := a.srv.aclCallerOf(st, args.AuthToken)
		if err != nil {
			return 0, err
		}
		sees, err := caller.policyFilter(st)
		if err != nil {
			return 0, err
		}
		policies, err := st.ACLPolicies(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Policies = []*structs.ACLPolicyListStub{}
		for _, p := range policies {
			if sees(p.Name) {
				reply.Policies = append(reply.Policies, p.Stub())
			}
		}
		return maxIndex(st, state.TableACLPolicies)
	})
}

// GetPolicy reads one policy. A non-management caller may read the
// policies its token links, and anyone the anonymous policy (which
// applies to everyone without a token anyway), as in Nomad.
func (a *ACL) GetPolicy(args *structs.ACLPolicySpecificRequest, reply *structs.SingleACLPolicyResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.GetPolicy", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		caller, err := a.srv.aclCallerOf(st, args.AuthToken)
		if err != nil {
			return 0, err
		}
		sees, err := caller.policyFilter(st)
		if err != nil {
			return 0, err
		}
		if args.Name != structs.AnonymousACLPolicy && !sees(args.Name) {
			return 0, structs.ErrPermissionDenied
		}
		p, err := st.ACLPolicyByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Policy = p
		if p != nil {
			return p.ModifyIndex, nil
		}
		return maxIndex(st, state.TableACLPolicies)
	})
}

// aclCaller is who asks to see ACL objects: a management caller sees
// them all, any other only those its token links (token nil: the
// anonymous caller, which links the "anonymous" policy).
type aclCaller struct {
	management bool
	token      *structs.ACLToken
}

// aclCallerOf resolves the caller of an ACL read from st; an unknown or
// expired secret is an error.
func (s *Server) aclCallerOf(st *state.StateStore, secret string) (aclCaller, error) {
	if secret != "" && secret == s.leaderACL {
		return aclCaller{management: true}, nil
	}
	token, err := s.tokenForSecret(st, secret)
	if err != nil {
		return aclCaller{}, err
	}
	return aclCaller{management: token != nil && token.Type == structs.ACLManagementToken, token: token}, nil
}

// policyFilter says which policies, by name, the caller may see.
func (c aclCaller) policyFilter(st *state.StateStore) (func(name string) bool, error) {
	if c.management {
		return func(string) bool { return true }, nil
	}
	names, err := tokenPolicyNames(st, c.token)
	if err != nil {
		return nil, err
	}
	return func(name string) bool { return slices.Contains(names, name) }, nil
}

// seesRole says whether the caller may see the role with this ID: a
// management caller every role, any other the roles its token links.
func (c aclCaller) seesRole(id string) bool {
	if c.management {
		return true
	}
	if c.token == nil {
		return false
	}
	return slices.ContainsFunc(c.token.Roles, func(l *structs.ACLTokenRoleLink) bool { return l.ID == id })
}

// tokenPolicyNames lists the policies a token grants: its own and those
// of its roles, plus the anonymous policy for no token.
func tokenPolicyNames(st *state.StateStore, token *structs.ACLToken) ([]string, error) {
	if token == nil {
		return []string{structs.AnonymousACLPolicy}, nil
	}
	names := append([]string{}, token.Policies...)
	for _, link := range token.Roles {
		role, err := st.ACLRoleByID(nil, link.ID)
		if err != nil {
			return nil, err
		}
		if role != nil {
			names = append(names, role.PolicyNames()...)
		}
	}
	return names, nil
}

// UpsertTokens creates, updates or uploads tokens. A token without an
// accessor ID is new and gets both IDs here; one whose accessor ID exists
// is an update (its secret, creation and expiry times stay); one whose
// accessor ID does not exist is an upload that keeps the given IDs.
func (a *ACL) UpsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.UpsertTokens", args.WriteRequest, args, reply); done {
		return err
	}
	return a.upsertTokens(args, reply)
}

// upsertTokens stores tokens on the leader, for a caller already
// authorized (ACL.UpsertTokens after forward, or a login minting one).
func (a *ACL) upsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	if len(args.Tokens) == 0 {
		return structs.NewBadRequest("must specify as least one token")
	}
	st := a.srv.State()
	now := time.Now().UTC()
	for _, t := range args.Tokens {
		if t == nil {
			return structs.NewBadRequest("must specify as least one token")
		}
		var existing *structs.ACLToken
		if t.AccessorID != "" {
			var err error
			if existing, err = st.ACLTokenByAccessorID(nil, t.AccessorID); err != nil {
				return err
			}
		}
		// A token named by an accessor ID that does not exist yet is an
		// upload: the caller chose both IDs.
		upload := t.AccessorID != "" && existing == nil
		if upload {
			if t.SecretID == "" {
				return structs.NewBadRequest(fmt.Sprintf("cannot find token %s (to upload a token, give its secret ID too)", t.AccessorID))
			}
			if t.Type == structs.ACLManagementToken {
				return structs.NewBadRequest("cannot upload management tokens")
			}
			if !structs.IsUUID(t.AccessorID) || !structs.IsUUID(t.SecretID) {
				return structs.NewBadRequest("accessor and secret IDs must be UUIDs")
			}
			if other, err := st.ACLTokenBySecretID(nil, t.SecretID); err != nil {
				return err
			} else if other != nil {
				return structs.NewBadRequest("secret ID already in use")
			}
		}
		if err := t.Validate(existing); err != nil {
			return structs.NewBadRequest(fmt.Sprintf("token %s: %v", t.AccessorID, err))
		}
		if t.ExpirationTTL != 0 {
			if min := a.srv.config.ACLTokenMinExpirationTTL; min > 0 && t.ExpirationTTL < min {
				return structs.NewBadRequest(fmt.Sprintf("expiration time cannot be less than %s", min))
			}
			if max := a.srv.config.ACLTokenMaxExpirationTTL; max > 0 && t.ExpirationTTL > max {
				return structs.NewBadRequest(fmt.Sprintf("expiration time cannot be more than %s", max))
			}
		}
		if err := resolveRoleLinks(st, t); err != nil {
			return err
		}
		if existing != nil {
			t.SecretID, t.CreateTime, t.ExpirationTime = existing.SecretID, existing.CreateTime, existing.ExpirationTime
		} else {
			if t.AccessorID == "" {
				t.AccessorID = structs.GenerateUUID()
			}
			if t.SecretID == "" {
				t.SecretID = structs.GenerateUUID()
			}
			t.CreateTime = now
			if t.ExpirationTTL != 0 {
				exp := t.CreateTime.Add(t.ExpirationTTL)
				t.ExpirationTime = &exp
			}
		}
		t.ExpirationTTL = 0
		t.SetHash()
	}
	_, index, err := a.srv.raftApply(structs.ACLTokenUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	st = a.srv.State()
	for _, t := range args.Tokens {
		stored, err := st.ACLTokenByAccessorID(nil, t.AccessorID)
		if err != nil {
			return err
		}
		reply.Tokens = append(reply.Tokens, stored)
	}
	return nil
}

// resolveRoleLinks fills each role link of t from state by ID or name,
// so the stored link carries both; an unknown role is refused.
func resolveRoleLinks(st *state.StateStore, t *structs.ACLToken) error {
	seen := map[string]bool{}
	var out []*structs.ACLTokenRoleLink
	for _, link := range t.Roles {
		if link == nil {
			continue
		}
		var role *structs.ACLRole
		var err error
		switch {
		case link.ID != "":
			role, err = st.ACLRoleByID(nil, link.ID)
		case link.Name != "":
			role, err = st.ACLRoleByName(nil, link.Name)
		default:
			return structs.NewBadRequest("role link without an ID or a name")
		}
		if err != nil {
			return err
		}
		if role == nil {
			return structs.NewBadRequest(fmt.Sprintf("cannot find role %s%s", link.ID, link.Name))
		}
		if !seen[role.ID] {
			seen[role.ID] = true
			out = append(out, &structs.ACLTokenRoleLink{ID: role.ID, Name: role.Name})
		}
	}
	t.Roles = out
	return nil
}

// DeleteTokens deletes tokens by accessor ID.
func (a *ACL) DeleteTokens(args *structs.ACLTokenDeleteRequest, reply *structs.GenericResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.DeleteTokens", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.AccessorIDs) == 0 {
		return structs.NewBadRequest("must specify as least one token")
	}
	_, index, err := a.srv.raftApply(structs.ACLTokenDeleteRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListTokens lists tokens without their secrets.
func (a *ACL) ListTokens(args *structs.ACLTokenListRequest, reply *structs.ACLTokenListResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.ListTokens", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		tokens, err := st.ACLTokens(ws, args.Prefix, args.GlobalOnly)
		if err != nil {
			return 0, err
		}
		reply.Tokens = make([]*structs.ACLTokenListStub, 0, len(tokens))
		for _, t := range tokens {
			reply.Tokens = append(reply.Tokens, t.Stub())
		}
		return maxIndex(st, state.TableACLTokens)
	})
}

// GetToken reads one token by accessor ID. A token may always read
// itself; reading another needs a management token (checked by the
// authorizer, which lets "self" reads through).
func (a *ACL) GetToken(args *structs.ACLTokenSpecificRequest, reply *structs.SingleACLTokenResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.GetToken", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		caller, err := a.srv.tokenForSecret(st, args.AuthToken)
		if err != nil {
			return 0, err
		}
		t, err := st.ACLTokenByAccessorID(ws, args.AccessorID)
		if err != nil {
			return 0, err
		}
		isSelf := caller != nil && t != nil && caller.AccessorID == t.AccessorID
		if !isSelf && (caller == nil || caller.Type != structs.ACLManagementToken) {
			return 0, structs.ErrPermissionDenied
		}
		reply.Token = t
		if t != nil {
			return t.ModifyIndex, nil
		}
		return maxIndex(st, state.TableACLTokens)
	})
}

// ResolveToken returns the token for a secret, with the policies it
// grants. An unknown or expired secret is "ACL token not found".
func (a *ACL) ResolveToken(args *structs.ResolveACLTokenRequest, reply *structs.ResolveACLTokenResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	st := a.srv.State()
	token, err := a.srv.tokenForSecret(st, args.SecretID)
	if err != nil {
		return err
	}
	reply.Token = token
	names, err := tokenPolicyNames(st, token)
	if err != nil {
		return err
	}
	for _, n := range names {
		p, err := st.ACLPolicyByName(nil, n)
		if err != nil {
			return err
		}
		if p != nil {
			reply.Policies = append(reply.Policies, p)
		}
	}
	idx, err := maxIndex(st, state.TableACLTokens, state.TableACLPolicies, state.TableACLRoles)
	reply.Index = idx
	reply.KnownLeader = a.srv.Leader() != ""
	return err
}

// UpsertRoles creates or updates roles; every linked policy must exist.
func (a *ACL) UpsertRoles(args *structs.ACLRolesUpsertRequest, reply *structs.ACLRolesUpsertResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.UpsertRoles", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Roles) == 0 {
		return structs.NewBadRequest("must specify at least one role")
	}
	st := a.srv.State()
	for _, r := range args.Roles {
		if r == nil {
			return structs.NewBadRequest("must specify at least one role")
		}
		if err := r.Validate(); err != nil {
			return structs.NewBadRequest(fmt.Sprintf("role %q: %v", r.Name, err))
		}
		if r.ID == "" {
			r.ID = structs.GenerateUUID()
		} else if existing, err := st.ACLRoleByID(nil, r.ID); err != nil {
			return err
		} else if existing == nil {
			return structs.NewBadRequest(fmt.Sprintf("cannot find role %s", r.ID))
		}
		for _, p := range r.Policies {
			if policy, err := st.ACLPolicyByName(nil, p.Name); err != nil {
				return err
			} else if policy == nil {
				return structs.NewBadRequest(fmt.Sprintf("cannot find policy %s", p.Name))
			}
		}
		if byName, err := st.ACLRoleByName(nil, r.Name); err != nil {
			return err
		} else if byName != nil && byName.ID != r.ID {
			return structs.NewBadRequest(fmt.Sprintf("role with name %s already exists", r.Name))
		}
		r.SetHash()
	}
	_, index, err := a.srv.raftApply(structs.ACLRolesUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	st = a.srv.State()
	for _, r := range args.Roles {
		stored, err := st.ACLRoleByID(nil, r.ID)
		if err != nil {
			return err
		}
		reply.Roles = append(reply.Roles, stored)
	}
	return nil
}

// DeleteRolesByID deletes roles.
func (a *ACL) DeleteRolesByID(args *structs.ACLRolesDeleteByIDRequest, reply *structs.GenericResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.DeleteRolesByID", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.ACLRoleIDs) == 0 {
		return structs.NewBadRequest("must specify at least one role")
	}
	_, index, err := a.srv.raftApply(structs.ACLRolesDeleteByIDRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ListRoles lists roles: all to a management token, to any other
// caller the roles its token links (none for the anonymous caller), as
// in Nomad.
func (a *ACL) ListRoles(args *structs.ACLRolesListRequest, reply *structs.ACLRolesListResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.ListRoles", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		caller, err := a.srv.aclCallerOf(st, args.AuthToken)
		if err != nil {
			return 0, err
		}
		roles, err := st.ACLRoles(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.ACLRoles = make([]*structs.ACLRoleListStub, 0, len(roles))
		for _, r := range roles {
			if caller.seesRole(r.ID) {
				reply.ACLRoles = append(reply.ACLRoles, r.Stub())
			}
		}
		return maxIndex(st, state.TableACLRoles)
	})
}

// GetRoleByID reads one role; a non-management caller only a role its
// token links.
func (a *ACL) GetRoleByID(args *structs.ACLRoleByIDRequest, reply *structs.ACLRoleByIDResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.GetRoleByID", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		caller, err := a.srv.aclCallerOf(st, args.AuthToken)
		if err != nil {
			return 0, err
		}
		if !caller.seesRole(args.RoleID) {
			return 0, structs.ErrPermissionDenied
		}
		r, err := st.ACLRoleByID(ws, args.RoleID)
		if err != nil {
			return 0, err
		}
		reply.ACLRole = r
		return maxIndex(st, state.TableACLRoles)
	})
}

// GetRoleByName reads one role by name; a non-management caller only a
// role its token links. The link is checked by the role's ID, which a
// rename does not change.
func (a *ACL) GetRoleByName(args *structs.ACLRoleByNameRequest, reply *structs.ACLRoleByIDResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.GetRoleByName", args.QueryOptions, args, reply); done {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		caller, err := a.srv.aclCallerOf(st, args.AuthToken)
		if err != nil {
			return 0, err
		}
		r, err := st.ACLRoleByName(ws, args.RoleName)
		if err != nil {
			return 0, err
		}
		// An unknown name is refused like a role the caller may not
		// see, so that names cannot be probed.
		if !caller.management && (r == nil || !caller.seesRole(r.ID)) {
			return 0, structs.ErrPermissionDenied
		}
		reply.ACLRole = r
		return maxIndex(st, state.TableACLRoles)
	})
}

// UpsertOneTimeToken makes a one-time token for the caller's own token.
func (a *ACL) UpsertOneTimeToken(args *structs.OneTimeTokenUpsertRequest, reply *structs.OneTimeTokenUpsertResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.UpsertOneTimeToken", args.WriteRequest, args, reply); done {
		return err
	}
	caller, err := a.srv.tokenForSecret(a.srv.State(), args.AuthToken)
	if err != nil {
		return err
	}
	if caller == nil {
		return structs.ErrPermissionDenied
	}
	args.OneTimeToken = &structs.OneTimeToken{
		OneTimeSecretID: structs.GenerateUUID(),
		AccessorID:      caller.AccessorID,
		ExpiresAt:       time.Now().UTC().Add(structs.OneTimeTokenTTL),
	}
	_, index, err := a.srv.raftApply(structs.OneTimeTokenUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.OneTimeToken = args.OneTimeToken
	reply.Index = index
	return nil
}

// ExchangeOneTimeToken trades a one-time secret, once, for the token it
// was made from.
func (a *ACL) ExchangeOneTimeToken(args *structs.OneTimeTokenExchangeRequest, reply *structs.OneTimeTokenExchangeResponse) error {
	if err := a.enabled(); err != nil {
		return err
	}
	if done, err := a.srv.forward("ACL.ExchangeOneTimeToken", args.WriteRequest, args, reply); done {
		return err
	}
	st := a.srv.State()
	ott, err := st.OneTimeTokenBySecret(nil, args.OneTimeSecretID)
	if err != nil {
		return err
	}
	if ott == nil || ott.ExpiresAt.Before(time.Now()) {
		return structs.ErrPermissionDenied
	}
	token, err := st.ACLTokenByAccessorID(nil, ott.AccessorID)
	if err != nil {
		return err
	}
	if token == nil || token.IsExpired(time.Now()) {
		return structs.ErrPermissionDenied
	}
	del := &structs.OneTimeTokenDeleteRequest{OneTimeSecretIDs: []string{ott.OneTimeSecretID}, WriteRequest: args.WriteRequest}
	_, index, err := a.srv.raftApply(structs.OneTimeTokenDeleteRequestType, del)
	if err != nil {
		return err
	}
	reply.Token = token
	reply.Index = index
	return nil
}

// tokenForSecret returns the token of a secret: nil for "" (anonymous),
// ErrTokenNotFound for an unknown or expired one.
func (s *Server) tokenForSecret(st *state.StateStore, secret string) (*structs.ACLToken, error) {
	if secret == "" {
		return nil, nil
	}
	t, err := st.ACLTokenBySecretID(nil, secret)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, structs.ErrTokenNotFound
	}
	if t.IsExpired(time.Now()) {
		return nil, structs.ErrTokenExpired
	}
	return t, nil
}
