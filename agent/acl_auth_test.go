package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func signJWT(t *testing.T, key *ecdsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	must.NoError(t, err)
	tok, err := josejwt.Signed(signer).Claims(claims).Serialize()
	must.NoError(t, err)
	return tok
}

// TestACLAuth_JWTLogin: on a real agent with ACLs, a management token
// sets up a JWT auth method and a binding rule; a JWT signed with the
// method's key logs in and the minted token can do what the bound policy
// grants, no more, for the method's MaxTokenTTL. Bad JWTs are refused
// with the reason, and OIDC login says it is not supported.
func TestACLAuth_JWTLogin(t *testing.T) {
	a, c, _ := aclAgent(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	must.NoError(t, err)
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))

	_, err = c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "readers", Rules: `namespace "default" { policy = "read" }`}, nil)
	must.NoError(t, err)

	method := &api.ACLAuthMethod{
		Name: "ci", Type: api.ACLAuthMethodTypeJWT, TokenLocality: "local", MaxTokenTTL: time.Hour,
		TokenNameFormat: "${auth_method_name}-${value.sub}", Default: true,
		Config: &api.ACLAuthMethodConfig{
			JWTValidationPubKeys: []string{pub}, BoundAudiences: []string{"nomad"}, BoundIssuer: []string{"https://ci.example"},
			SigningAlgs: []string{"ES256"}, ClaimMappings: map[string]string{"sub": "sub"},
			ListClaimMappings: map[string]string{"groups": "groups"},
		},
	}
	stored, _, err := c.ACLAuthMethods().Create(method, nil)
	must.NoError(t, err)
	must.Eq(t, time.Hour, stored.MaxTokenTTL)
	must.Eq(t, []string{"ES256"}, stored.Config.SigningAlgs)

	// A second default is refused, and so is nonsense.
	_, _, err = c.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "other", Type: "JWT", TokenLocality: "local",
		MaxTokenTTL: time.Hour, Default: true, Config: &api.ACLAuthMethodConfig{JWTValidationPubKeys: []string{pub}}}, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "default method already exists: ci")
	_, _, err = c.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "bad", Type: "SAML", TokenLocality: "nowhere",
		MaxTokenTTL: time.Hour, Config: &api.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"junk"}}}, nil)
	must.ErrorContains(t, err, `invalid type "SAML"`)
	must.ErrorContains(t, err, `invalid token locality "nowhere"`)
	_, _, err = c.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "bad", Type: "JWT", TokenLocality: "local",
		MaxTokenTTL: time.Hour, Config: &api.ACLAuthMethodConfig{JWTValidationPubKeys: []string{"junk"}, OIDCClientID: "x"}}, nil)
	must.ErrorContains(t, err, "JWTValidationPubKeys[0]: not a PEM-encoded public key")
	_, _, err = c.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "bad", Type: "JWT", TokenLocality: "local",
		MaxTokenTTL: time.Hour, Config: &api.ACLAuthMethodConfig{JWTValidationPubKeys: []string{pub}, OIDCClientID: "x"}}, nil)
	must.ErrorContains(t, err, `field "OIDCClientID" applies to OIDC auth methods only`)
	list, _, err := c.ACLAuthMethods().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, list)

	rule, _, err := c.ACLBindingRules().Create(&api.ACLBindingRule{
		AuthMethod: "ci", Selector: `"deployers" in list.groups`, BindType: "policy", BindName: "readers",
	}, nil)
	must.NoError(t, err)
	must.NotEq(t, "", rule.ID)
	_, _, err = c.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: "ci", Selector: "((", BindType: "policy", BindName: "x"}, nil)
	must.ErrorContains(t, err, `selector "((" is invalid`)
	_, _, err = c.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: "nope", BindType: "management"}, nil)
	must.ErrorContains(t, err, "ACL auth method nope not found")

	now := time.Now()
	claims := map[string]any{"iss": "https://ci.example", "aud": "nomad", "sub": "build-7",
		"groups": []string{"deployers"}, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	anon := apiClient(t, a)

	// Anyone may list methods (a login screen does); reading one is for
	// management tokens only.
	list, _, err = anon.ACLAuthMethods().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, list)
	_, _, err = anon.ACLAuthMethods().Get("ci", nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = anon.ACLBindingRules().List(nil)
	must.ErrorContains(t, err, "Permission denied")

	token, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "ci", LoginToken: signJWT(t, key, claims)}, nil)
	must.NoError(t, err)
	must.Eq(t, "ci-build-7", token.Name)
	must.Eq(t, "client", token.Type)
	must.Eq(t, []string{"readers"}, token.Policies)
	must.NotNil(t, token.ExpirationTime)
	must.True(t, token.ExpirationTime.After(now.Add(55*time.Minute)))

	// The minted token reads jobs and cannot register one.
	user := apiClient(t, a)
	user.SetSecretID(token.SecretID)
	_, _, err = user.Jobs().List(nil)
	must.NoError(t, err)
	_, _, err = user.Jobs().Register(mockJob("nope", 1), nil)
	must.ErrorContains(t, err, "Permission denied")
	// A client token cannot manage auth methods or binding rules.
	_, _, err = user.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "mine", Type: "JWT", TokenLocality: "local",
		MaxTokenTTL: time.Hour, Config: &api.ACLAuthMethodConfig{JWTValidationPubKeys: []string{pub}}}, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, err = user.ACLAuthMethods().Delete("ci", nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = user.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: "ci", BindType: "management"}, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = user.ACLBindingRules().Get(rule.ID, nil)
	must.ErrorContains(t, err, "Permission denied")

	// Bad JWTs: 401 with the reason; claims no rule matches: 400.
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for k, v := range claims {
			out[k] = v
		}
		out[k] = v
		return out
	}
	bad := []struct {
		name, jwt, want string
	}{
		{"wrong key", signJWT(t, otherKey, claims), "401 (unable to validate provided token: unable to verify signature of JWT token: error verifying token signature"},
		{"expired", signJWT(t, key, with("exp", now.Add(-10*time.Minute).Unix())), "token is expired"},
		{"wrong audience", signJWT(t, key, with("aud", "vault")), "invalid audience (aud) claim"},
		{"no matching rule", signJWT(t, key, with("groups", []string{"guests"})), "400 (no role or policy bindings matched)"},
	}
	for _, tc := range bad {
		_, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "ci", LoginToken: tc.jwt}, nil)
		must.ErrorContains(t, err, tc.want, must.Sprint(tc.name))
	}
	_, _, err = anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "nope", LoginToken: "x"}, nil)
	must.ErrorContains(t, err, `400 (auth-method "nope" not found)`)

	// A management binding mints a management token.
	_, _, err = c.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: "ci", Selector: `value.sub == "root-build"`, BindType: "management"}, nil)
	must.NoError(t, err)
	mgmt, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "ci", LoginToken: signJWT(t, key, with("sub", "root-build"))}, nil)
	must.NoError(t, err)
	must.Eq(t, "management", mgmt.Type)

	// OIDC: the method is stored, its login refused with the reason.
	_, _, err = c.ACLAuthMethods().Create(&api.ACLAuthMethod{Name: "sso", Type: "OIDC", TokenLocality: "global", MaxTokenTTL: time.Hour,
		Config: &api.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://sso.example", OIDCClientID: "id", OIDCClientSecret: "s3cret"}}, nil)
	must.NoError(t, err)
	sso, _, err := c.ACLAuthMethods().Get("sso", nil)
	must.NoError(t, err)
	must.Eq(t, "redacted", sso.Config.OIDCClientSecret)
	_, _, err = anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "sso", LoginToken: "x"}, nil)
	must.ErrorContains(t, err, "OIDC login is not supported by nomadq")
	_, _, err = anon.ACLAuth().GetAuthURL(&api.ACLOIDCAuthURLRequest{AuthMethodName: "sso", RedirectURI: "http://localhost:4649/oidc/callback", ClientNonce: "n"}, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "OIDC login is not supported by nomadq")

	// Deleting the method deletes its rules with it.
	_, err = c.ACLAuthMethods().Delete("ci", nil)
	must.NoError(t, err)
	rules, _, err := c.ACLBindingRules().List(nil)
	must.NoError(t, err)
	must.Len(t, 0, rules)
	_, _, err = c.ACLAuthMethods().Get("ci", nil)
	must.ErrorContains(t, err, "404")
}
