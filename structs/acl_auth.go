package structs

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/go-bexpr"
)

// Raft message types of auth methods and binding rules, with Nomad's
// numbers.
const (
	ACLAuthMethodsUpsertRequestType  MessageType = 55
	ACLAuthMethodsDeleteRequestType  MessageType = 56
	ACLBindingRulesUpsertRequestType MessageType = 57
	ACLBindingRulesDeleteRequestType MessageType = 58
)

// Auth method types, token localities and binding rule bind types, with
// Nomad's spelling.
const (
	ACLAuthMethodTypeOIDC = "OIDC"
	ACLAuthMethodTypeJWT  = "JWT"

	ACLAuthMethodTokenLocalityLocal  = "local"
	ACLAuthMethodTokenLocalityGlobal = "global"

	ACLBindingRuleBindTypeRole       = "role"
	ACLBindingRuleBindTypePolicy     = "policy"
	ACLBindingRuleBindTypeManagement = "management"

	// DefaultACLAuthMethodTokenNameFormat names the tokens a login mints
	// when the method sets no TokenNameFormat.
	DefaultACLAuthMethodTokenNameFormat = "${auth_method_type}-${auth_method_name}"

	maxACLBindingRuleDescriptionLength = 256
)

var validACLAuthMethodName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")

// ACLAuthMethod is a way to log in with a credential from another
// identity provider: a JWT signed by a key the method trusts (type JWT)
// or an OIDC provider's login flow (type OIDC, stored only: nomadq does
// not run the OIDC flow).
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	MaxTokenTTL     time.Duration
	Default         bool
	Config          *ACLAuthMethodConfig
	Hash            []byte

	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLAuthMethodConfig is the provider-specific part of an auth method.
type ACLAuthMethodConfig struct {
	JWTValidationPubKeys []string
	JWKSURL              string
	OIDCDiscoveryURL     string
	OIDCClientID         string
	OIDCClientSecret     string
	// OIDCClientAssertion is kept as the JSON the caller sent; nomadq
	// refuses any non-empty one (OIDC login is not supported).
	OIDCClientAssertion json.RawMessage `json:",omitempty"`
	OIDCEnablePKCE      bool
	OIDCDisableUserInfo bool
	OIDCScopes          []string
	BoundAudiences      []string
	BoundIssuer         []string
	AllowedRedirectURIs []string
	DiscoveryCaPem      []string
	JWKSCACert          string
	SigningAlgs         []string
	ExpirationLeeway    time.Duration
	NotBeforeLeeway     time.Duration
	ClockSkewLeeway     time.Duration
	ClaimMappings       map[string]string
	ListClaimMappings   map[string]string
	VerboseLogging      bool
}

// ACLAuthMethodStub is an auth method in a listing.
type ACLAuthMethodStub struct {
	Name        string
	Type        string
	Default     bool
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the listing form of the method.
func (m *ACLAuthMethod) Stub() *ACLAuthMethodStub {
	return &ACLAuthMethodStub{Name: m.Name, Type: m.Type, Default: m.Default, Hash: m.Hash,
		CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex}
}

// Copy returns a deep copy.
func (m *ACLAuthMethod) Copy() *ACLAuthMethod {
	if m == nil {
		return nil
	}
	c := *m
	c.Hash = slices.Clone(m.Hash)
	c.Config = m.Config.Copy()
	return &c
}

// Copy returns a deep copy.
func (c *ACLAuthMethodConfig) Copy() *ACLAuthMethodConfig {
	if c == nil {
		return nil
	}
	out := *c
	out.JWTValidationPubKeys = slices.Clone(c.JWTValidationPubKeys)
	out.OIDCClientAssertion = slices.Clone(c.OIDCClientAssertion)
	out.OIDCScopes = slices.Clone(c.OIDCScopes)
	out.BoundAudiences = slices.Clone(c.BoundAudiences)
	out.BoundIssuer = slices.Clone(c.BoundIssuer)
	out.AllowedRedirectURIs = slices.Clone(c.AllowedRedirectURIs)
	out.DiscoveryCaPem = slices.Clone(c.DiscoveryCaPem)
	out.SigningAlgs = slices.Clone(c.SigningAlgs)
	out.ClaimMappings = maps.Clone(c.ClaimMappings)
	out.ListClaimMappings = maps.Clone(c.ListClaimMappings)
	return &out
}

// Sanitize returns a copy without the OIDC client secret, for reads.
func (m *ACLAuthMethod) Sanitize() *ACLAuthMethod {
	if m == nil || m.Config == nil || m.Config.OIDCClientSecret == "" {
		return m
	}
	c := m.Copy()
	c.Config.OIDCClientSecret = "redacted"
	return c
}

// Merge fills the fields an update left empty from the stored method, as
// Nomad does: an update names only what changes. Name and Default are
// never taken from the stored method.
func (m *ACLAuthMethod) Merge(existing *ACLAuthMethod) {
	if existing == nil {
		return
	}
	if m.Type == "" {
		m.Type = existing.Type
	}
	if m.TokenLocality == "" {
		m.TokenLocality = existing.TokenLocality
	}
	if m.TokenNameFormat == "" {
		m.TokenNameFormat = existing.TokenNameFormat
	}
	if m.MaxTokenTTL == 0 {
		m.MaxTokenTTL = existing.MaxTokenTTL
	}
	if m.Config == nil {
		m.Config = existing.Config.Copy()
	} else if m.Config.OIDCClientSecret == "redacted" && existing.Config != nil {
		// A read answers the secret redacted; writing that back keeps
		// the stored secret.
		m.Config.OIDCClientSecret = existing.Config.OIDCClientSecret
	}
	m.CreateTime = existing.CreateTime
}

// IsGlobal reports whether the method mints global tokens.
func (m *ACLAuthMethod) IsGlobal() bool { return m.TokenLocality == ACLAuthMethodTokenLocalityGlobal }

// SetHash sets Hash over the fields that define the method.
func (m *ACLAuthMethod) SetHash() {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00%t", m.Name, m.Type, m.TokenLocality, m.TokenNameFormat, m.MaxTokenTTL, m.Default)
	if c := m.Config; c != nil {
		fmt.Fprintf(h, "\x00%q\x00%s\x00%s\x00%s\x00%s\x00%s\x00%t\x00%t\x00%q\x00%q\x00%q\x00%q\x00%q\x00%s\x00%q\x00%d\x00%d\x00%d\x00%t",
			c.JWTValidationPubKeys, c.JWKSURL, c.OIDCDiscoveryURL, c.OIDCClientID, c.OIDCClientSecret, c.OIDCClientAssertion,
			c.OIDCEnablePKCE, c.OIDCDisableUserInfo, c.OIDCScopes, c.BoundAudiences, c.BoundIssuer, c.AllowedRedirectURIs,
			c.DiscoveryCaPem, c.JWKSCACert, c.SigningAlgs, c.ExpirationLeeway, c.NotBeforeLeeway, c.ClockSkewLeeway, c.VerboseLogging)
		for _, mm := range []map[string]string{c.ClaimMappings, c.ListClaimMappings} {
			keys := make([]string, 0, len(mm))
			for k := range mm {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(h, "\x00%s=%s", k, mm[k])
			}
			h.Write([]byte{1})
		}
	}
	m.Hash = h.Sum(nil)
}

// Validate checks the method as Nomad does, and refuses what nomadq would
// store without honouring it. minTTL and maxTTL bound MaxTokenTTL.
func (m *ACLAuthMethod) Validate(minTTL, maxTTL time.Duration) error {
	var errs MultiError
	if !validACLAuthMethodName.MatchString(m.Name) {
		errs.Add(fmt.Errorf("invalid name %q: names are 1-128 letters, digits or '-'", m.Name))
	}
	if m.TokenLocality != ACLAuthMethodTokenLocalityLocal && m.TokenLocality != ACLAuthMethodTokenLocalityGlobal {
		errs.Add(fmt.Errorf("invalid token locality %q: must be %q or %q", m.TokenLocality, ACLAuthMethodTokenLocalityLocal, ACLAuthMethodTokenLocalityGlobal))
	}
	if m.Type != ACLAuthMethodTypeOIDC && m.Type != ACLAuthMethodTypeJWT {
		errs.Add(fmt.Errorf("invalid type %q: must be %q or %q", m.Type, ACLAuthMethodTypeJWT, ACLAuthMethodTypeOIDC))
	}
	if m.MaxTokenTTL < minTTL || m.MaxTokenTTL > maxTTL {
		errs.Add(fmt.Errorf("invalid MaxTokenTTL value %q (should be between %s and %s)", m.MaxTokenTTL, minTTL, maxTTL))
	}
	if err := m.Config.validate(m.Type); err != nil {
		errs.Add(fmt.Errorf("invalid config: %w", err))
	}
	return errs.ErrorOrNil()
}

func (c *ACLAuthMethodConfig) validate(methodType string) error {
	if c == nil {
		return errors.New("missing auth method Config")
	}
	var errs MultiError
	if len(c.OIDCClientAssertion) > 0 && string(c.OIDCClientAssertion) != "null" {
		errs.Add(errors.New("field \"OIDCClientAssertion\" is not supported by nomadq (OIDC login is not supported)"))
	}
	switch methodType {
	case ACLAuthMethodTypeOIDC:
		if c.OIDCDiscoveryURL == "" {
			errs.Add(errors.New("missing OIDCDiscoveryURL"))
		}
		if c.OIDCClientID == "" {
			errs.Add(errors.New("missing OIDCClientID"))
		}
	case ACLAuthMethodTypeJWT:
		sources := 0
		for _, set := range []bool{len(c.JWTValidationPubKeys) > 0, c.JWKSURL != "", c.OIDCDiscoveryURL != ""} {
			if set {
				sources++
			}
		}
		switch {
		case sources == 0:
			errs.Add(errors.New("JWT auth method requires either OIDCDiscoveryURL, or JWKSURL, or JWTValidationPubKeys set"))
		case sources > 1:
			errs.Add(errors.New("JWT auth method takes exactly one of OIDCDiscoveryURL, JWKSURL and JWTValidationPubKeys"))
		}
		if c.JWKSCACert != "" && c.JWKSURL == "" {
			errs.Add(errors.New("JWKSCACert requires JWKSURL"))
		}
		if len(c.DiscoveryCaPem) > 0 && c.OIDCDiscoveryURL == "" {
			errs.Add(errors.New("DiscoveryCaPem requires OIDCDiscoveryURL"))
		}
		if len(c.DiscoveryCaPem) > 1 {
			errs.Add(errors.New("DiscoveryCaPem: a JWT auth method uses one CA certificate, got several"))
		}
		// Fields of the OIDC login flow would be stored and never used.
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"OIDCClientID", c.OIDCClientID != ""}, {"OIDCClientSecret", c.OIDCClientSecret != ""},
			{"OIDCEnablePKCE", c.OIDCEnablePKCE}, {"OIDCDisableUserInfo", c.OIDCDisableUserInfo},
			{"OIDCScopes", len(c.OIDCScopes) > 0}, {"AllowedRedirectURIs", len(c.AllowedRedirectURIs) > 0},
		} {
			if f.set {
				errs.Add(fmt.Errorf("field %q applies to OIDC auth methods only, not to type JWT", f.name))
			}
		}
	}
	return errs.ErrorOrNil()
}

// ACLBindingRule maps the claims of a login through one auth method to
// what the minted token grants: a role, a policy or management.
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	Selector    string
	BindType    string
	BindName    string
	Hash        []byte

	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRuleListStub is a binding rule in a listing.
type ACLBindingRuleListStub struct {
	ID          string
	Description string
	AuthMethod  string
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the listing form of the rule.
func (r *ACLBindingRule) Stub() *ACLBindingRuleListStub {
	return &ACLBindingRuleListStub{ID: r.ID, Description: r.Description, AuthMethod: r.AuthMethod, Hash: r.Hash,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
}

// Merge fills the fields an update left empty from the stored rule, as
// Nomad does (BindName, BindType and AuthMethod).
func (r *ACLBindingRule) Merge(existing *ACLBindingRule) {
	if r.BindName == "" && r.BindType != ACLBindingRuleBindTypeManagement {
		r.BindName = existing.BindName
	}
	if r.BindType == "" {
		r.BindType = existing.BindType
	}
	if r.AuthMethod == "" {
		r.AuthMethod = existing.AuthMethod
	}
	r.CreateTime = existing.CreateTime
}

// SetHash sets Hash over the fields that define the rule.
func (r *ACLBindingRule) SetHash() {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s", r.ID, r.Description, r.AuthMethod, r.Selector, r.BindType, r.BindName)
	r.Hash = h.Sum(nil)
}

// Validate checks the rule as Nomad does; the selector must parse.
func (r *ACLBindingRule) Validate() error {
	var errs MultiError
	if r.AuthMethod == "" {
		errs.Add(errors.New("auth method is missing"))
	}
	if len(r.Description) > maxACLBindingRuleDescriptionLength {
		errs.Add(fmt.Errorf("description longer than %d", maxACLBindingRuleDescriptionLength))
	}
	switch r.BindType {
	case "":
		errs.Add(fmt.Errorf("bind type is missing: must be %q, %q or %q", ACLBindingRuleBindTypeRole, ACLBindingRuleBindTypePolicy, ACLBindingRuleBindTypeManagement))
	case ACLBindingRuleBindTypeRole, ACLBindingRuleBindTypePolicy:
		if r.BindName == "" {
			errs.Add(fmt.Errorf("bind name is missing: bind type %q names a %s", r.BindType, r.BindType))
		}
	case ACLBindingRuleBindTypeManagement:
		if r.BindName != "" {
			errs.Add(fmt.Errorf("bind name should be empty for bind type %q, got %q", r.BindType, r.BindName))
		}
	default:
		errs.Add(fmt.Errorf("unsupported bind type %q: must be %q, %q or %q", r.BindType, ACLBindingRuleBindTypeRole, ACLBindingRuleBindTypePolicy, ACLBindingRuleBindTypeManagement))
	}
	if r.Selector != "" {
		if _, err := bexpr.CreateEvaluator(r.Selector); err != nil {
			errs.Add(fmt.Errorf("selector %q is invalid: %v", r.Selector, err))
		}
	}
	return errs.ErrorOrNil()
}

// ACLAuthClaims is what binding rule selectors see of a login: the
// values of the method's ClaimMappings and ListClaimMappings.
type ACLAuthClaims struct {
	Value map[string]string   `bexpr:"value"`
	List  map[string][]string `bexpr:"list"`
}

// ACLAuthMethodUpsertRequest creates or updates auth methods.
type ACLAuthMethodUpsertRequest struct {
	AuthMethods []*ACLAuthMethod
	WriteRequest
}

// ACLAuthMethodUpsertResponse answers with the stored methods.
type ACLAuthMethodUpsertResponse struct {
	AuthMethods []*ACLAuthMethod
	WriteMeta
}

// ACLAuthMethodDeleteRequest deletes auth methods by name.
type ACLAuthMethodDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLAuthMethodListRequest lists auth methods.
type ACLAuthMethodListRequest struct {
	QueryOptions
}

// ACLAuthMethodListResponse answers an auth method listing.
type ACLAuthMethodListResponse struct {
	AuthMethods []*ACLAuthMethodStub
	QueryMeta
}

// ACLAuthMethodGetRequest reads one auth method by name.
type ACLAuthMethodGetRequest struct {
	MethodName string
	QueryOptions
}

// ACLAuthMethodGetResponse answers an auth method read; nil when there
// is none.
type ACLAuthMethodGetResponse struct {
	AuthMethod *ACLAuthMethod
	QueryMeta
}

// ACLBindingRulesUpsertRequest creates or updates binding rules.
type ACLBindingRulesUpsertRequest struct {
	ACLBindingRules []*ACLBindingRule
	WriteRequest
}

// ACLBindingRulesUpsertResponse answers with the stored rules.
type ACLBindingRulesUpsertResponse struct {
	ACLBindingRules []*ACLBindingRule
	WriteMeta
}

// ACLBindingRulesDeleteRequest deletes binding rules by ID.
type ACLBindingRulesDeleteRequest struct {
	ACLBindingRuleIDs []string
	WriteRequest
}

// ACLBindingRulesListRequest lists binding rules.
type ACLBindingRulesListRequest struct {
	QueryOptions
}

// ACLBindingRulesListResponse answers a binding rule listing.
type ACLBindingRulesListResponse struct {
	ACLBindingRules []*ACLBindingRuleListStub
	QueryMeta
}

// ACLBindingRuleRequest reads one binding rule by ID.
type ACLBindingRuleRequest struct {
	ACLBindingRuleID string
	QueryOptions
}

// ACLBindingRuleResponse answers a binding rule read; nil when there is
// none.
type ACLBindingRuleResponse struct {
	ACLBindingRule *ACLBindingRule
	QueryMeta
}

// ACLLoginRequest trades a credential from another identity provider (a
// JWT) for an ACL token, through the named auth method.
type ACLLoginRequest struct {
	AuthMethodName string
	LoginToken     string
	WriteRequest
}

// ACLLoginResponse carries the minted token.
type ACLLoginResponse struct {
	ACLToken *ACLToken
	WriteMeta
}
