package nomad

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/structs"
)

// TestClientIntroductionToken_Claims: the token is signed by the active
// root key (kid) with Nomad's claims; TTL 0 takes the server default, a
// TTL above the maximum is cut to it, and the server verifies its own
// token until it expires.
func TestClientIntroductionToken_Claims(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.NodeIntroduction = &structs.NodeIntroductionConfig{Enforcement: "strict", DefaultIdentityTTL: 2 * time.Minute, MaxIdentityTTL: 10 * time.Minute}
	})
	key := waitForKeyring(t, s)
	priv, err := s.keyring.PrivateKey(key)
	must.NoError(t, err)

	mint := func(req structs.ACLCreateClientIntroductionTokenRequest) (string, introClaims) {
		t.Helper()
		var reply structs.ACLCreateClientIntroductionTokenResponse
		must.NoError(t, s.RPC("ACL.CreateClientIntroductionToken", &req, &reply))
		tok, err := jwt.ParseSigned(reply.JWT, []jose.SignatureAlgorithm{jose.RS256})
		must.NoError(t, err)
		must.Eq(t, key.KeyID, tok.Headers[0].KeyID)
		var c introClaims
		must.NoError(t, tok.Claims(&priv.PublicKey, &c))
		return reply.JWT, c
	}

	raw, c := mint(structs.ACLCreateClientIntroductionTokenRequest{})
	must.Eq(t, structs.NodeIntroductionClaims{NodePool: "default"}, c.NodeIntroductionClaims)
	must.Eq(t, jwt.Audience{"nomadproject.io"}, c.Audience)
	must.Eq(t, "node-introduction:global:default::default", c.Subject)
	must.Eq(t, 2*time.Minute, c.Expiry.Time().Sub(c.IssuedAt.Time()))
	must.NotEq(t, "", c.ID)
	got, err := s.verifyIntroToken(raw, time.Now())
	must.NoError(t, err)
	must.Eq(t, "default", got.NodePool)
	_, err = s.verifyIntroToken(raw, time.Now().Add(3*time.Minute))
	must.ErrorContains(t, err, "expired")

	_, c = mint(structs.ACLCreateClientIntroductionTokenRequest{TTL: time.Hour, NodeName: "n1", NodePool: "gpu"})
	must.Eq(t, structs.NodeIntroductionClaims{NodePool: "gpu", NodeName: "n1"}, c.NodeIntroductionClaims)
	must.Eq(t, 10*time.Minute, c.Expiry.Time().Sub(c.IssuedAt.Time()))
	_, c = mint(structs.ACLCreateClientIntroductionTokenRequest{TTL: 30 * time.Second})
	must.Eq(t, 30*time.Second, c.Expiry.Time().Sub(c.IssuedAt.Time()))

	var reply structs.ACLCreateClientIntroductionTokenResponse
	must.ErrorContains(t, s.RPC("ACL.CreateClientIntroductionToken", &structs.ACLCreateClientIntroductionTokenRequest{TTL: -time.Second}, &reply), "TTL -1s: must not be negative")
	must.ErrorContains(t, s.RPC("ACL.CreateClientIntroductionToken", &structs.ACLCreateClientIntroductionTokenRequest{NodePool: "all"}, &reply), `NodePool "all"`)

	// A workload-identity-like JWT from the same key is no introduction.
	_, err = s.verifyIntroToken("a.b.c", time.Now())
	must.Error(t, err)
}

func TestClientIntroductionRequest_TTLJSON(t *testing.T) {
	for body, want := range map[string]time.Duration{
		`{"TTL": 1000000000}`: time.Second,
		`{"TTL": "10m"}`:      10 * time.Minute,
		`{"TTL": ""}`:         0,
		`{}`:                  0,
	} {
		var r structs.ACLCreateClientIntroductionTokenRequest
		must.NoError(t, json.Unmarshal([]byte(body), &r), must.Sprint(body))
		must.Eq(t, want, r.TTL, must.Sprint(body))
	}
	var r structs.ACLCreateClientIntroductionTokenRequest
	must.ErrorContains(t, json.Unmarshal([]byte(`{"TTL": "soon"}`), &r), `TTL "soon"`)
	must.ErrorContains(t, json.Unmarshal([]byte(`{"TTL": true}`), &r), "TTL true")
}

// A client introduction token asked for before the leader has a root key
// (a new cluster's leader writes it just after its election) waits for the
// key instead of failing with a 500; the docs test hit that window in CI.
func TestClientIntroductionToken_WaitsForFirstRootKey(t *testing.T) {
	s := testServer(t, nil)
	key := waitForKeyring(t, s)
	old := key.Copy()
	old.State = structs.RootKeyStateInactive
	must.NoError(t, s.State().UpsertRootKey(key.ModifyIndex+1000, old))

	next, err := keyring.NewRootKey(time.Now())
	must.NoError(t, err)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = s.State().UpsertRootKey(key.ModifyIndex+1001, next)
	}()
	var reply structs.ACLCreateClientIntroductionTokenResponse
	must.NoError(t, s.RPC("ACL.CreateClientIntroductionToken", &structs.ACLCreateClientIntroductionTokenRequest{}, &reply))
	tok, err := jwt.ParseSigned(reply.JWT, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	// Signed by a key that became active after the wait: the test's, or
	// one the leader wrote itself on seeing none active.
	must.NotEq(t, key.KeyID, tok.Headers[0].KeyID)
}
