package command

import (
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestUICommand(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.ACL.Enabled = true })
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	root, _, err := c.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	c.SetSecretID(root.SecretID)
	job := api.NewBatchJob("ui-cli-job", "ui-cli-job", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	task := api.NewTask("t", "raw_exec")
	task.Config = map[string]any{"command": "/bin/true"}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, nodes)

	code, out, errOut := cli(t, addr, "ui", "-show-url")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "URL for web UI: "+addr+"/ui/jobs\n", out)

	code, out, errOut = cli(t, addr, "ui", "-show-url", "-token", root.SecretID, "ui-cli")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "URL for web UI: "+addr+"/ui/jobs/ui-cli-job\n", out)

	code, out, errOut = cli(t, addr, "ui", "-show-url", "-token", root.SecretID, "-namespace", "default", nodes[0].ID[:8])
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "URL for web UI: "+addr+"/ui/clients/"+nodes[0].ID+"?namespace=default\n", out)

	// -authenticate puts a one-time token for the caller's own token in
	// the URL; exchanged, it gives that token back.
	code, out, errOut = cli(t, addr, "ui", "-show-url", "-authenticate", "-token", root.SecretID)
	must.Eq(t, 0, code, must.Sprint(errOut))
	u, err := url.Parse(strings.TrimSpace(strings.TrimPrefix(out, "URL for web UI: ")))
	must.NoError(t, err)
	must.Eq(t, "/ui/jobs", u.Path)
	ott := u.Query().Get("ott")
	must.NotEq(t, "", ott)
	tok, _, err := c.ACLTokens().ExchangeOneTimeToken(ott, nil)
	must.NoError(t, err)
	must.Eq(t, root.AccessorID, tok.AccessorID)

	code, _, errOut = cli(t, addr, "ui", "-show-url", "-authenticate")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Could not get one-time token")

	code, _, errOut = cli(t, addr, "ui", "-show-url", "-token", root.SecretID, "no-such-thing")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `Unable to resolve ID: "no-such-thing"`)

	code, _, errOut = cli(t, addr, "ui", "a", "b")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "This command takes no or one optional argument")
}
