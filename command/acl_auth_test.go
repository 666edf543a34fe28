package command

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

// TestACLAuthCommands drives auth methods, binding rules and nomad login
// through the CLI against a real agent.
func TestACLAuthCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.ACL.Enabled = true })
	addr := a.HTTPAddr()
	code, out, errOut := cli(t, addr, "acl", "bootstrap")
	must.Eq(t, 0, code, must.Sprint(errOut))
	root := regexp.MustCompile(`(?m)^Secret ID\s+= (\S+)$`).FindStringSubmatch(out)[1]

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	must.NoError(t, err)
	config, err := json.Marshal(map[string]any{
		"JWTValidationPubKeys": []string{string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
		"SigningAlgs":          []string{"ES256"},
		"BoundAudiences":       []string{"nomad"},
		"ClaimMappings":        map[string]string{"sub": "sub"},
	})
	must.NoError(t, err)
	cfgFile := filepath.Join(t.TempDir(), "ci.json")
	must.NoError(t, os.WriteFile(cfgFile, config, 0o644))

	code, _, errOut = cli(t, addr, "acl", "auth-method", "create", "-token", root, "-name", "ci", "-type", "jwt",
		"-token-locality", "local", "-max-token-ttl", "1h", "-config", "@"+cfgFile)
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, _, errOut = cli(t, addr, "acl", "auth-method", "create", "-token", root, "-name", "x", "-type", "jwt",
		"-token-locality", "local", "-max-token-ttl", "1h", "-config", `{"JWKSURL": "https://a", "JWTValidationPubKeys": ["x"]}`)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "exactly one of OIDCDiscoveryURL, JWKSURL and JWTValidationPubKeys")

	code, out, errOut = cli(t, addr, "acl", "auth-method", "update", "-token", root, "-default", "-max-token-ttl", "2h", "ci")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Max Token TTL     = 2h0m0s")
	must.StrContains(t, out, "Default           = true")
	must.StrContains(t, out, "Signing algorithms         = ES256")

	code, out, _ = cli(t, addr, "acl", "auth-method", "list")
	must.Eq(t, 0, code)
	must.StrContains(t, out, "Name  Type  Default")
	must.StrContains(t, out, "ci    JWT   true")

	code, out, errOut = cli(t, addr, "acl", "policy", "apply", "-token", root, "readers", writeTemp(t, `namespace "default" { policy = "read" }`))
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, out, errOut = cli(t, addr, "acl", "binding-rule", "create", "-token", root, "-auth-method", "ci",
		"-bind-type", "policy", "-bind-name", "readers", "-selector", `value.sub == "build-7"`, "-description", "CI builds")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `Selector     = "value.sub == \"build-7\""`)
	ruleID := regexp.MustCompile(`(?m)^ID\s+= (\S+)$`).FindStringSubmatch(out)[1]

	code, out, _ = cli(t, addr, "acl", "binding-rule", "list", "-token", root)
	must.Eq(t, 0, code)
	must.StrContains(t, out, ruleID+"  CI builds    ci")
	code, out, errOut = cli(t, addr, "acl", "binding-rule", "update", "-token", root, "-description", "builds", ruleID)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Description  = builds")
	must.StrContains(t, out, "Bind Name    = readers")
	code, out, _ = cli(t, addr, "acl", "binding-rule", "info", "-token", root, ruleID)
	must.Eq(t, 0, code)
	must.StrContains(t, out, "Auth Method  = ci")

	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, nil)
	must.NoError(t, err)
	jwt, err := josejwt.Signed(signer).Claims(map[string]any{"aud": "nomad", "sub": "build-7",
		"exp": time.Now().Add(time.Minute).Unix()}).Serialize()
	must.NoError(t, err)

	// The default method is used without -method.
	code, out, errOut = cli(t, addr, "login", "-login-token", jwt)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Successfully logged in via JWT and ci")
	must.StrContains(t, out, "Name         = JWT-ci")
	must.StrContains(t, out, "Policies     = [readers]")
	secret := regexp.MustCompile(`(?m)^Secret ID\s+= (\S+)$`).FindStringSubmatch(out)[1]
	code, _, errOut = cli(t, addr, "job", "status", "-token", secret)
	must.Eq(t, 0, code, must.Sprint(errOut))

	code, _, errOut = cli(t, addr, "login", "-method", "ci", "-type", "OIDC", "-login-token", jwt)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "method ci is of type JWT, not OIDC")
	code, _, errOut = cli(t, addr, "login", "-method", "ci", "-login-token", "garbage")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error performing login: Unexpected response code: 401 (unable to validate provided token")

	code, out, _ = cli(t, addr, "acl", "binding-rule", "delete", "-token", root, ruleID)
	must.Eq(t, 0, code)
	must.Eq(t, "ACL binding rule "+ruleID+" successfully deleted\n", out)
	code, out, _ = cli(t, addr, "acl", "auth-method", "delete", "-token", root, "ci")
	must.Eq(t, 0, code)
	must.Eq(t, "ACL auth method ci successfully deleted\n", out)
	code, out, _ = cli(t, addr, "acl", "auth-method", "list")
	must.Eq(t, 0, code)
	must.Eq(t, "No ACL auth methods found\n", out)
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	must.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}
