package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// introServer starts a server-only agent with ACLs on and the given
// client_introduction block; it returns the agent, a management client
// and the server's log.
func introServer(t *testing.T, ci *structs.NodeIntroductionConfig) (*Agent, *api.Client, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	srv, err := StartLocal(func(c *config.Config) {
		c.Client.Enabled = false
		c.ACL.Enabled = true
		c.Server.ClientIntroduction = ci
	}, log, 60*time.Second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = srv.ShutdownKillingTasks() })
	c := apiClient(t, srv)
	root, _, err := c.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	c.SetSecretID(root.SecretID)
	return srv, c, log
}

// introClient starts a client-only agent named name against srv without
// waiting for its node to register; tokenFile, when set, is written to
// intro_token.jwt in its state directory first.
func introClient(t *testing.T, srv *Agent, name, token, tokenFile string) *logBuffer {
	t.Helper()
	cfg := config.Dev()
	cfg.Name = name
	cfg.Ports = &config.Ports{}
	cfg.LogLevel = "WARN"
	cfg.DevMode = false
	cfg.Server.Enabled = false
	cfg.DataDir = t.TempDir()
	cfg.Client.Servers = []string{srv.RPCAddr()}
	cfg.Client.IntroToken = token
	if tokenFile != "" {
		must.NoError(t, os.MkdirAll(filepath.Join(cfg.DataDir, "client"), 0o755))
		must.NoError(t, os.WriteFile(filepath.Join(cfg.DataDir, "client", "intro_token.jwt"), []byte(tokenFile+"\n"), 0o600))
	}
	log := &logBuffer{}
	a, err := New(cfg, log)
	must.NoError(t, err)
	t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
	return log
}

func introNodeNames(t *testing.T, c *api.Client) []string {
	t.Helper()
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return names
}

func waitIntroNode(t *testing.T, c *api.Client, name string) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false
		}
		for _, n := range nodes {
			if n.Name == name && n.Status == "ready" {
				return true
			}
		}
		return false
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
}

// TestClientIntroduction_Strict: a token minted over HTTP lets a client
// register under strict enforcement (from the file in its state
// directory); no token, an expired one and one for another node name are
// refused, and those nodes never appear.
func TestClientIntroduction_Strict(t *testing.T) {
	srv, c, _ := introServer(t, &structs.NodeIntroductionConfig{
		Enforcement: "strict", DefaultIdentityTTL: 5 * time.Minute, MaxIdentityTTL: 30 * time.Minute,
	})

	// Minting needs node write.
	anon := apiClient(t, srv)
	_, _, err := anon.ACLIdentity().CreateClientIntroductionToken(&api.ACLIdentityClientIntroductionTokenRequest{}, nil)
	must.ErrorContains(t, err, "403")
	_, _, err = c.ACLIdentity().CreateClientIntroductionToken(&api.ACLIdentityClientIntroductionTokenRequest{NodePool: "all"}, nil)
	must.ErrorContains(t, err, "NodePool")

	mint := func(req api.ACLIdentityClientIntroductionTokenRequest) string {
		resp, _, err := c.ACLIdentity().CreateClientIntroductionToken(&req, nil)
		must.NoError(t, err)
		must.StrContains(t, resp.JWT, ".")
		return resp.JWT
	}
	good := mint(api.ACLIdentityClientIntroductionTokenRequest{NodeName: "intro-good"})
	other := mint(api.ACLIdentityClientIntroductionTokenRequest{NodeName: "someone-else"})
	// Expired by construction, no waiting: JWT times are whole seconds
	// (truncated), so a 1ns token expires at the second it was signed in,
	// which is behind us once the token is back. The server's expiry
	// check against other clocks is nomad's TestClientIntroductionToken_Claims.
	expired := mint(api.ACLIdentityClientIntroductionTokenRequest{TTL: time.Nanosecond})
	tok, err := jwt.ParseSigned(expired, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	var claims jwt.Claims
	must.NoError(t, tok.UnsafeClaimsWithoutVerification(&claims))
	must.NotNil(t, claims.Expiry)
	must.True(t, time.Now().After(claims.Expiry.Time()), must.Sprintf("expiry %s is not past", claims.Expiry.Time()))

	introClient(t, srv, "intro-good", "", good)
	noneLog := introClient(t, srv, "intro-none", "", "")
	otherLog := introClient(t, srv, "intro-other", other, "")
	expiredLog := introClient(t, srv, "intro-expired", expired, "")

	waitIntroNode(t, c, "intro-good")
	waitLogLine(t, noneLog, "node registration failed", "enforcement is strict")
	waitLogLine(t, otherLog, "node registration failed", "someone-else", "403")
	waitLogLine(t, expiredLog, "node registration failed", "expired")
	must.Eq(t, []string{"intro-good"}, introNodeNames(t, c))
}

// TestClientIntroduction_Warn: under Nomad's default (warn) a client
// without a token registers and the server logs it; a token for another
// node name is still refused.
func TestClientIntroduction_Warn(t *testing.T) {
	srv, c, srvLog := introServer(t, nil)
	other, _, err := c.ACLIdentity().CreateClientIntroductionToken(&api.ACLIdentityClientIntroductionTokenRequest{NodeName: "someone-else"}, nil)
	must.NoError(t, err)

	introClient(t, srv, "intro-plain", "", "")
	otherLog := introClient(t, srv, "intro-other", other.JWT, "")
	waitIntroNode(t, c, "intro-plain")
	waitLogLine(t, srvLog, "node registration without introduction token", "enforcement_level=warn", "node_name=intro-plain")
	waitLogLine(t, otherLog, "node registration failed", "someone-else", "403")
	must.Eq(t, []string{"intro-plain"}, introNodeNames(t, c))
}
