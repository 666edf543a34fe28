package command

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestACLCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.ACL.Enabled = true })
	addr := a.HTTPAddr()
	secretRe := regexp.MustCompile(`(?m)^Secret ID\s+= (\S+)$`)
	accessorRe := regexp.MustCompile(`(?m)^Accessor ID\s+= (\S+)$`)

	code, out, errOut := cli(t, addr, "acl", "bootstrap")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Name         = Bootstrap Token")
	must.StrContains(t, out, "Type         = management")
	must.StrContains(t, out, "Policies     = n/a")
	root := secretRe.FindStringSubmatch(out)[1]

	code, _, errOut = cli(t, addr, "acl", "bootstrap")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "ACL bootstrap already done")

	// Without a token: refused, exit 1.
	code, _, errOut = cli(t, addr, "job", "status")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Permission denied")

	rules := filepath.Join(t.TempDir(), "reader.hcl")
	must.NoError(t, os.WriteFile(rules, []byte(`namespace "default" { policy = "read" }`), 0o644))
	code, out, errOut = cli(t, addr, "acl", "policy", "apply", "-token", root, "-description", "reads", "reader", rules)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully wrote \"reader\" ACL policy!\n", out)

	bad := filepath.Join(t.TempDir(), "bad.hcl")
	must.NoError(t, os.WriteFile(bad, []byte(`namespace "default" { policy = "owner" }`), 0o644))
	code, _, errOut = cli(t, addr, "acl", "policy", "apply", "-token", root, "bad", bad)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `invalid namespace policy "owner"`)

	code, out, _ = cli(t, addr, "acl", "policy", "list", "-token", root)
	must.Eq(t, 0, code)
	must.StrContains(t, out, "reader")
	must.StrContains(t, out, "reads")

	code, out, errOut = cli(t, addr, "acl", "token", "create", "-token", root, "-name", "ci", "-policy", "reader", "-ttl", "1h")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Policies     = [reader]")
	reader := secretRe.FindStringSubmatch(out)[1]
	accessor := accessorRe.FindStringSubmatch(out)[1]
	must.NotEq(t, "Expiry Time  = <none>", out)

	code, out, errOut = cli(t, addr, "acl", "token", "self", "-token", reader)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Name         = ci")
	code, _, errOut = cli(t, addr, "job", "status", "-token", reader)
	must.Eq(t, 0, code, must.Sprint(errOut))

	code, out, _ = cli(t, addr, "acl", "token", "list", "-token", root)
	must.Eq(t, 0, code)
	must.StrContains(t, out, "Name             Type        Global  Accessor ID")
	must.StrContains(t, out, accessor)
	code, _, errOut = cli(t, addr, "acl", "token", "list", "-token", reader)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Permission denied")

	code, out, errOut = cli(t, addr, "acl", "token", "update", "-token", root, "-name", "ci-2", accessor)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Name         = ci-2")

	code, out, _ = cli(t, addr, "acl", "token", "delete", "-token", root, accessor)
	must.Eq(t, 0, code)
	must.Eq(t, "Token "+accessor+" successfully deleted\n", out)
	code, _, errOut = cli(t, addr, "acl", "token", "self", "-token", reader)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "ACL token not found")

	code, out, _ = cli(t, addr, "acl", "policy", "delete", "-token", root, "reader")
	must.Eq(t, 0, code)
	must.Eq(t, "Successfully deleted \"reader\" ACL policy!\n", out)
}
