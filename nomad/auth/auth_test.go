package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func testKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	must.NoError(t, err)
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func sign(t *testing.T, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	must.NoError(t, err)
	tok, err := josejwt.Signed(signer).Claims(claims).Serialize()
	must.NoError(t, err)
	return tok
}

func TestValidateJWT_StaticKeys(t *testing.T) {
	key, pub := testKey(t)
	otherKey, _ := testKey(t)
	now := time.Now()
	cfg := &structs.ACLAuthMethodConfig{
		JWTValidationPubKeys: []string{pub},
		BoundAudiences:       []string{"nomad"},
		BoundIssuer:          []string{"https://ci.example"},
		SigningAlgs:          []string{"ES256"},
	}
	good := map[string]any{"iss": "https://ci.example", "aud": "nomad", "sub": "build-7",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	with := func(k string, v any) map[string]any {
		out := map[string]any{}
		for k, v := range good {
			out[k] = v
		}
		out[k] = v
		return out
	}

	claims, err := ValidateJWT(context.Background(), sign(t, key, "", good), cfg, time.Now)
	must.NoError(t, err)
	must.Eq(t, "build-7", claims["sub"])

	cases := []struct {
		name  string
		token string
		cfg   *structs.ACLAuthMethodConfig
		want  string
	}{
		{"wrong key", sign(t, otherKey, "", good), cfg, "error verifying token signature"},
		// Past the default 60s clock skew leeway.
		{"expired", sign(t, key, "", with("exp", now.Add(-5*time.Minute).Unix())), cfg, "token is expired"},
		{"wrong audience", sign(t, key, "", with("aud", "vault")), cfg, "invalid audience (aud) claim"},
		{"wrong issuer", sign(t, key, "", with("iss", "https://evil.example")), cfg, `invalid JWT issuer: "https://evil.example"`},
		{"not yet valid", sign(t, key, "", with("nbf", now.Add(time.Hour).Unix())), cfg, "token not yet valid"},
		{"algorithm not allowed", sign(t, key, "", good), &structs.ACLAuthMethodConfig{JWTValidationPubKeys: []string{pub}},
			"token signed with unexpected algorithm"},
		{"garbage", "not-a-jwt", cfg, "unable to verify signature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateJWT(context.Background(), tc.token, tc.cfg, time.Now)
			must.ErrorContains(t, err, tc.want)
		})
	}

	// An expired token passes within the method's leeway.
	lenient := *cfg
	lenient.ClockSkewLeeway = 10 * time.Minute
	_, err = ValidateJWT(context.Background(), sign(t, key, "", with("exp", now.Add(-5*time.Minute).Unix())), &lenient, time.Now)
	must.NoError(t, err)
}

// TestValidateJWT_JWKS fetches the keys from a JWKS endpoint over TLS,
// trusting it through JWKSCACert.
func TestValidateJWT_JWKS(t *testing.T) {
	key, _ := testKey(t)
	jwks := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jwks)
	}))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	cfg := &structs.ACLAuthMethodConfig{JWKSURL: srv.URL, JWKSCACert: ca, SigningAlgs: []string{"ES256"}}
	must.NoError(t, CheckJWTConfig(cfg))

	tok := sign(t, key, "k1", map[string]any{"sub": "x", "exp": time.Now().Add(time.Minute).Unix()})
	claims, err := ValidateJWT(context.Background(), tok, cfg, time.Now)
	must.NoError(t, err)
	must.Eq(t, "x", claims["sub"])

	// Without the CA the TLS handshake fails and so does the login.
	noCA := *cfg
	noCA.JWKSCACert = ""
	_, err = ValidateJWT(context.Background(), tok, &noCA, time.Now)
	must.ErrorContains(t, err, "certificate")
}

func TestCheckJWTConfig(t *testing.T) {
	err := CheckJWTConfig(&structs.ACLAuthMethodConfig{
		JWTValidationPubKeys: []string{"not a key"}, JWKSCACert: "nope", SigningAlgs: []string{"HS256"},
	})
	must.ErrorContains(t, err, "JWTValidationPubKeys[0]: not a PEM-encoded public key")
	must.ErrorContains(t, err, "JWKSCACert: not a PEM-encoded certificate")
	must.ErrorContains(t, err, `SigningAlgs: "HS256" is not a supported algorithm`)
}

type fakeLookup struct {
	roles    map[string]*structs.ACLRole
	policies map[string]*structs.ACLPolicy
}

func (f fakeLookup) ACLRoleByName(n string) (*structs.ACLRole, error)     { return f.roles[n], nil }
func (f fakeLookup) ACLPolicyByName(n string) (*structs.ACLPolicy, error) { return f.policies[n], nil }

func TestSelectorDataAndBind(t *testing.T) {
	cfg := &structs.ACLAuthMethodConfig{
		ClaimMappings:     map[string]string{"sub": "subject", "/project/name": "project", "missing": "gone"},
		ListClaimMappings: map[string]string{"groups": "groups", "role": "roles"},
	}
	claims := map[string]any{
		"sub": "build-7", "project": map[string]any{"name": "Web"},
		"groups": []any{"eng", "ops", ""}, "role": "deployer",
	}
	data, err := SelectorData(cfg, claims)
	must.NoError(t, err)
	must.Eq(t, map[string]string{"subject": "build-7", "project": "Web"}, data.Value)
	must.Eq(t, map[string][]string{"groups": {"eng", "ops"}, "roles": {"deployer"}}, data.List)

	_, err = SelectorData(&structs.ACLAuthMethodConfig{ClaimMappings: map[string]string{"groups": "g"}}, claims)
	must.ErrorContains(t, err, `claim "groups" of type []interface {} cannot be mapped to a string value`)

	lookup := fakeLookup{
		roles:    map[string]*structs.ACLRole{"eng-role": {ID: "r1", Name: "eng-role"}},
		policies: map[string]*structs.ACLPolicy{"web": {Name: "web"}, "deploy": {Name: "deploy"}},
	}
	rules := []*structs.ACLBindingRule{
		{ID: "1", Selector: `"eng" in list.groups`, BindType: "role", BindName: "eng-role"},
		// Interpolated from the claims, lower-cased.
		{ID: "2", Selector: `value.subject == "build-7"`, BindType: "policy", BindName: "${value.project}"},
		{ID: "3", Selector: `"admins" in list.groups`, BindType: "management"},
		{ID: "4", BindType: "policy", BindName: "deploy"},
		{ID: "5", BindType: "policy", BindName: "does-not-exist"},
		{ID: "6", Selector: `this is not bexpr ((`, BindType: "policy", BindName: "web"},
	}
	b, err := Bind(rules, data, cfg.ClaimMappings, lookup)
	must.NoError(t, err)
	must.False(t, b.Management)
	must.Eq(t, []*structs.ACLTokenRoleLink{{ID: "r1", Name: "eng-role"}}, b.Roles)
	must.Eq(t, []string{"web", "deploy"}, b.Policies)

	data.List["groups"] = append(data.List["groups"], "admins")
	b, err = Bind(rules, data, cfg.ClaimMappings, lookup)
	must.NoError(t, err)
	must.True(t, b.Management)

	b, err = Bind(rules[:1], &structs.ACLAuthClaims{}, nil, lookup)
	must.NoError(t, err)
	must.True(t, b.None())

	name, err := TokenName(&structs.ACLAuthMethod{Name: "ci", Type: "JWT", TokenNameFormat: "${auth_method_name}-${value.subject}"}, data)
	must.NoError(t, err)
	must.Eq(t, "ci-build-7", name)
	name, err = TokenName(&structs.ACLAuthMethod{Name: "ci", Type: "JWT"}, data)
	must.NoError(t, err)
	must.Eq(t, "JWT-ci", name)
	_, err = TokenName(&structs.ACLAuthMethod{Name: "ci", TokenNameFormat: "${nope"}, data)
	must.ErrorContains(t, err, "failed to generate ACL token name")
}

// TestValidateJWT_OIDCDiscovery finds the JWKS through the provider's
// discovery document, trusting it through DiscoveryCaPem.
func TestValidateJWT_OIDCDiscovery(t *testing.T) {
	key, _ := testKey(t)
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "jwks_uri": srv.URL + "/keys"})
		case "/keys":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	cfg := &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: srv.URL, DiscoveryCaPem: []string{ca}, SigningAlgs: []string{"ES256"},
		BoundIssuer: []string{srv.URL}}
	must.NoError(t, CheckJWTConfig(cfg))
	tok := sign(t, key, "k1", map[string]any{"iss": srv.URL, "sub": "y", "exp": time.Now().Add(time.Minute).Unix()})
	claims, err := ValidateJWT(context.Background(), tok, cfg, time.Now)
	must.NoError(t, err)
	must.Eq(t, "y", claims["sub"])
}
