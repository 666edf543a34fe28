package structs

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Raft message types of the ACL system, with Nomad's numbers.
const (
	ACLPolicyUpsertRequestType    MessageType = 19
	ACLPolicyDeleteRequestType    MessageType = 20
	ACLTokenUpsertRequestType     MessageType = 21
	ACLTokenDeleteRequestType     MessageType = 22
	ACLTokenBootstrapRequestType  MessageType = 23
	OneTimeTokenUpsertRequestType MessageType = 44
	OneTimeTokenDeleteRequestType MessageType = 45
	OneTimeTokenExpireRequestType MessageType = 46
	ACLRolesUpsertRequestType     MessageType = 53
	ACLRolesDeleteByIDRequestType MessageType = 54
)

// ACL token types.
const (
	ACLClientToken     = "client"
	ACLManagementToken = "management"
)

// AnonymousACLPolicy is the policy name whose rules apply to requests
// without a token.
const AnonymousACLPolicy = "anonymous"

// ACL limits, as Nomad's.
const (
	maxACLPolicyNameLength     = 128
	maxACLDescriptionLength    = 256
	maxACLTokenNameLength      = 256
	maxACLRoleNameLength       = 256
	MinACLTokenExpirationTTL   = time.Minute
	MaxACLTokenExpirationTTL   = 24 * time.Hour * 365 * 100
	OneTimeTokenTTL            = 10 * time.Minute
	ACLBootstrapResetIndexFile = "acl-bootstrap-reset"
)

var validACLName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")
var validACLRoleName = regexp.MustCompile("^[a-zA-Z0-9-]{1,256}$")

// ACLPolicy is a named set of rules in Nomad's policy language.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	// JobACL attaches the policy to a job's workload identity.
	JobACL *JobACL
	Hash   []byte

	CreateIndex uint64
	ModifyIndex uint64
}

// JobACL names the job (and optionally group and task) whose workload
// identities a policy applies to.
type JobACL struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// ACLPolicyListStub is a policy in a listing.
type ACLPolicyListStub struct {
	Name        string
	Description string
	JobACL      *JobACL
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the listing form of the policy.
func (p *ACLPolicy) Stub() *ACLPolicyListStub {
	return &ACLPolicyListStub{Name: p.Name, Description: p.Description, JobACL: p.JobACL, Hash: p.Hash,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// SetHash sets Hash over the fields that define the policy.
func (p *ACLPolicy) SetHash() {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", p.Name, p.Description, p.Rules)
	if p.JobACL != nil {
		fmt.Fprintf(h, "\x00%s\x00%s\x00%s\x00%s", p.JobACL.Namespace, p.JobACL.JobID, p.JobACL.Group, p.JobACL.Task)
	}
	p.Hash = h.Sum(nil)
}

// Validate checks the policy's name and description; the rules are
// parsed by the caller (package acl).
func (p *ACLPolicy) Validate() error {
	var errs MultiError
	if !validACLName.MatchString(p.Name) {
		errs.Add(fmt.Errorf("invalid name %q: names are 1-%d letters, digits or '-'", p.Name, maxACLPolicyNameLength))
	}
	if len(p.Description) > maxACLDescriptionLength {
		errs.Add(fmt.Errorf("description longer than %d", maxACLDescriptionLength))
	}
	if p.JobACL != nil {
		if p.JobACL.JobID == "" && (p.JobACL.Group != "" || p.JobACL.Task != "") {
			errs.Add(errors.New("jobs ACL: a group or task requires a job ID"))
		}
		if p.JobACL.Group == "" && p.JobACL.Task != "" {
			errs.Add(errors.New("jobs ACL: a task requires a group"))
		}
	}
	return errs.ErrorOrNil()
}

// ACLTokenRoleLink links a token to a role by ID (the truth) and name.
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// ACLToken is a secret that carries policies. The AccessorID is public;
// the SecretID is the credential.
type ACLToken struct {
	AccessorID     string
	SecretID       string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	Hash           []byte
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	ExpirationTTL  time.Duration

	CreateIndex uint64
	ModifyIndex uint64
}

// ACLTokenListStub is a token in a listing, without its secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	Hash           []byte
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// Stub returns the listing form of the token.
func (t *ACLToken) Stub() *ACLTokenListStub {
	return &ACLTokenListStub{AccessorID: t.AccessorID, Name: t.Name, Type: t.Type, Policies: t.Policies,
		Roles: t.Roles, Global: t.Global, Hash: t.Hash, CreateTime: t.CreateTime, ExpirationTime: t.ExpirationTime,
		CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex}
}

// IsExpired reports whether the token has expired at now.
func (t *ACLToken) IsExpired(now time.Time) bool {
	return t.ExpirationTime != nil && !t.ExpirationTime.After(now)
}

// SetHash sets Hash over the fields that define the token.
func (t *ACLToken) SetHash() {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%t", t.Name, t.Type, t.SecretID, t.Global)
	for _, p := range t.Policies {
		fmt.Fprintf(h, "\x00p:%s", p)
	}
	for _, r := range t.Roles {
		fmt.Fprintf(h, "\x00r:%s", r.ID)
	}
	if t.ExpirationTime != nil {
		fmt.Fprintf(h, "\x00e:%d", t.ExpirationTime.UnixNano())
	}
	t.Hash = h.Sum(nil)
}

// Validate checks a token for creation (existing == nil) or update.
func (t *ACLToken) Validate(existing *ACLToken) error {
	var errs MultiError
	if len(t.Name) > maxACLTokenNameLength {
		errs.Add(fmt.Errorf("token name longer than %d", maxACLTokenNameLength))
	}
	switch t.Type {
	case ACLClientToken:
		if len(t.Policies) == 0 && len(t.Roles) == 0 {
			errs.Add(errors.New("client token missing policies or roles"))
		}
	case ACLManagementToken:
		if len(t.Policies) != 0 || len(t.Roles) != 0 {
			errs.Add(errors.New("management token cannot be associated with policies or roles"))
		}
	default:
		errs.Add(fmt.Errorf("token type must be client or management, not %q", t.Type))
	}
	if existing == nil {
		if t.ExpirationTTL != 0 {
			if t.ExpirationTTL < MinACLTokenExpirationTTL || t.ExpirationTTL > MaxACLTokenExpirationTTL {
				errs.Add(fmt.Errorf("expiration time cannot be less than %s or more than %s", MinACLTokenExpirationTTL, MaxACLTokenExpirationTTL))
			}
		}
	} else {
		if t.ExpirationTTL != 0 {
			errs.Add(errors.New("cannot update expiration TTL"))
		}
		if t.Global != existing.Global {
			errs.Add(errors.New("cannot toggle global mode"))
		}
		if t.ExpirationTime != nil && (existing.ExpirationTime == nil || !t.ExpirationTime.Equal(*existing.ExpirationTime)) {
			errs.Add(errors.New("cannot update expiration time"))
		}
	}
	return errs.ErrorOrNil()
}

// ACLRolePolicyLink links a role to a policy by name.
type ACLRolePolicyLink struct {
	Name string
}

// ACLRole is a named set of policies that tokens link to.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	Hash        []byte

	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRoleListStub is a role in a listing.
type ACLRoleListStub struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the listing form of the role.
func (r *ACLRole) Stub() *ACLRoleListStub {
	return &ACLRoleListStub{ID: r.ID, Name: r.Name, Description: r.Description, Policies: r.Policies, Hash: r.Hash,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
}

// SetHash sets Hash over the fields that define the role.
func (r *ACLRole) SetHash() {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s", r.Name, r.Description)
	for _, p := range r.Policies {
		fmt.Fprintf(h, "\x00%s", p.Name)
	}
	r.Hash = h.Sum(nil)
}

// PolicyNames lists the role's policy names.
func (r *ACLRole) PolicyNames() []string {
	out := make([]string, 0, len(r.Policies))
	for _, p := range r.Policies {
		out = append(out, p.Name)
	}
	return out
}

// Validate checks the role's name, description and policy links.
func (r *ACLRole) Validate() error {
	var errs MultiError
	if !validACLRoleName.MatchString(r.Name) {
		errs.Add(fmt.Errorf("invalid name %q: names are 1-%d letters, digits or '-'", r.Name, maxACLRoleNameLength))
	}
	if len(r.Description) > maxACLDescriptionLength {
		errs.Add(fmt.Errorf("description longer than %d", maxACLDescriptionLength))
	}
	if len(r.Policies) == 0 {
		errs.Add(errors.New("at least one policy should be specified"))
	}
	seen := map[string]bool{}
	for _, p := range r.Policies {
		if p == nil || p.Name == "" {
			errs.Add(errors.New("policy link without a name"))
			continue
		}
		if seen[p.Name] {
			errs.Add(fmt.Errorf("policy %q linked twice", p.Name))
		}
		seen[p.Name] = true
	}
	return errs.ErrorOrNil()
}

// OneTimeToken is a short-lived secret exchanged once for the token it
// was made from (the UI login flow).
type OneTimeToken struct {
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// ACLPolicyUpsertRequest writes policies.
type ACLPolicyUpsertRequest struct {
	Policies []*ACLPolicy
	WriteRequest
}

// ACLPolicyDeleteRequest deletes policies by name.
type ACLPolicyDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLPolicySpecificRequest reads one policy.
type ACLPolicySpecificRequest struct {
	Name string
	QueryOptions
}

// ACLPolicyListRequest lists policies.
type ACLPolicyListRequest struct {
	QueryOptions
}

// ACLPolicyListResponse answers a policy listing.
type ACLPolicyListResponse struct {
	Policies []*ACLPolicyListStub
	QueryMeta
}

// SingleACLPolicyResponse answers a policy read; Policy is nil when
// there is none.
type SingleACLPolicyResponse struct {
	Policy *ACLPolicy
	QueryMeta
}

// ACLTokenBootstrapRequest writes the first management token.
// ResetIndex is the bootstrap index the operator's reset file named.
type ACLTokenBootstrapRequest struct {
	Token           *ACLToken
	ResetIndex      uint64
	BootstrapSecret string
	WriteRequest
}

// ACLTokenUpsertRequest creates or updates tokens.
type ACLTokenUpsertRequest struct {
	Tokens []*ACLToken
	WriteRequest
}

// ACLTokenUpsertResponse answers a token write with the stored tokens.
type ACLTokenUpsertResponse struct {
	Tokens []*ACLToken
	WriteMeta
}

// ACLTokenDeleteRequest deletes tokens by accessor ID.
type ACLTokenDeleteRequest struct {
	AccessorIDs []string
	WriteRequest
}

// ACLTokenSpecificRequest reads one token by accessor ID.
type ACLTokenSpecificRequest struct {
	AccessorID string
	QueryOptions
}

// ACLTokenListRequest lists tokens.
type ACLTokenListRequest struct {
	GlobalOnly bool
	QueryOptions
}

// ACLTokenListResponse answers a token listing.
type ACLTokenListResponse struct {
	Tokens []*ACLTokenListStub
	QueryMeta
}

// SingleACLTokenResponse answers a token read.
type SingleACLTokenResponse struct {
	Token *ACLToken
	QueryMeta
}

// ResolveACLTokenRequest resolves a secret to its token and policies.
type ResolveACLTokenRequest struct {
	SecretID string
	QueryOptions
}

// ResolveACLTokenResponse carries the token (nil for anonymous) and the
// rules of every policy it grants.
type ResolveACLTokenResponse struct {
	Token    *ACLToken
	Policies []*ACLPolicy
	QueryMeta
}

// ACLRolesUpsertRequest creates or updates roles.
type ACLRolesUpsertRequest struct {
	Roles []*ACLRole
	WriteRequest
}

// ACLRolesUpsertResponse answers a role write with the stored roles.
type ACLRolesUpsertResponse struct {
	Roles []*ACLRole
	WriteMeta
}

// ACLRolesDeleteByIDRequest deletes roles by ID.
type ACLRolesDeleteByIDRequest struct {
	ACLRoleIDs []string
	WriteRequest
}

// ACLRoleByIDRequest reads one role by ID.
type ACLRoleByIDRequest struct {
	RoleID string
	QueryOptions
}

// ACLRoleByNameRequest reads one role by name.
type ACLRoleByNameRequest struct {
	RoleName string
	QueryOptions
}

// ACLRoleByIDResponse answers a role read.
type ACLRoleByIDResponse struct {
	ACLRole *ACLRole
	QueryMeta
}

// ACLRolesListRequest lists roles.
type ACLRolesListRequest struct {
	QueryOptions
}

// ACLRolesListResponse answers a role listing.
type ACLRolesListResponse struct {
	ACLRoles []*ACLRoleListStub
	QueryMeta
}

// OneTimeTokenUpsertRequest makes a one-time token for the caller's token.
type OneTimeTokenUpsertRequest struct {
	OneTimeToken *OneTimeToken
	WriteRequest
}

// OneTimeTokenUpsertResponse answers with the one-time token.
type OneTimeTokenUpsertResponse struct {
	OneTimeToken *OneTimeToken
	WriteMeta
}

// OneTimeTokenExchangeRequest trades a one-time secret for its token.
type OneTimeTokenExchangeRequest struct {
	OneTimeSecretID string
	WriteRequest
}

// OneTimeTokenExchangeResponse carries the token the one-time secret
// stood for.
type OneTimeTokenExchangeResponse struct {
	Token *ACLToken
	WriteMeta
}

// OneTimeTokenDeleteRequest deletes one-time tokens by their secret (the
// exchange) or all expired ones (Expire).
type OneTimeTokenDeleteRequest struct {
	OneTimeSecretIDs []string
	ExpireBefore     time.Time
	WriteRequest
}

// ContainsPolicy reports whether the token names policy directly.
func (t *ACLToken) ContainsPolicy(name string) bool { return slices.Contains(t.Policies, name) }

// Errors of the ACL system, answered as Nomad answers them (403, or 400
// for a request the server refuses).
var (
	ErrPermissionDenied = NewErrRPCCoded(403, "Permission denied")
	ErrTokenNotFound    = NewErrRPCCoded(403, "ACL token not found")
	ErrTokenExpired     = NewErrRPCCoded(403, "ACL token expired")
)

// NewBadRequest returns an error the HTTP API answers with 400 and msg.
func NewBadRequest(msg string) error { return NewErrRPCCoded(400, msg) }

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s has the 8-4-4-4-12 hex form of a UUID.
func IsUUID(s string) bool { return uuidPattern.MatchString(s) }
