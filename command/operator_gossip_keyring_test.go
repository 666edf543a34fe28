package command

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestGossipKeyringCommands(t *testing.T) {
	code, k1, errOut := run(t, "", "operator", "gossip", "keyring", "generate")
	must.Eq(t, 0, code, must.Sprint(errOut))
	k1 = strings.TrimSpace(k1)
	raw, err := base64.StdEncoding.DecodeString(k1)
	must.NoError(t, err)
	must.Len(t, 32, raw, must.Sprint("an AES-256 key"))
	_, k2, _ := run(t, "", "operator", "gossip", "keyring", "generate")
	k2 = strings.TrimSpace(k2)
	must.NotEq(t, k1, k2)

	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false; c.Server.EncryptKey = k1 })
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "operator", "gossip", "keyring", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Gathering installed encryption keys...\nKey\n"+k1+"\n", out)

	code, out, errOut = cli(t, addr, "operator", "gossip", "keyring", "install", k2)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Installing new gossip encryption key...\n", out)

	code, out, errOut = cli(t, addr, "operator", "gossip", "keyring", "use", k2)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Changing primary gossip encryption key...\n", out)

	code, out, errOut = cli(t, addr, "operator", "gossip", "keyring", "remove", k1)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Removing gossip encryption key...\n", out)

	code, out, errOut = cli(t, addr, "operator", "gossip", "keyring", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Gathering installed encryption keys...\nKey\n"+k2+"\n", out)

	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"remove the primary key", []string{"remove", k2}, "removing the primary key is not allowed"},
		{"a key that is not base64", []string{"install", "nope!"}, "Key is not allowed: the key is not valid base64"},
		{"no key", []string{"use"}, "This command requires one argument: <key>"},
		{"list with an argument", []string{"list", "x"}, "This command takes no arguments"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, append([]string{"operator", "gossip", "keyring"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.want)
		})
	}
}
