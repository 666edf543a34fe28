package command

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestNodeMeta(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) {
		c.Client.Meta = map[string]string{"rack": "r1", "keep": "x"}
	})
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	nodeID := a.Client().NodeID()

	// A job that needs the metadata waits for it.
	spec := writeSpec(t, "needs-db.nomad.hcl", `job "needs-db" {
  datacenters = ["*"]
  constraint {
    attribute = "${meta.role}"
    value     = "db"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo role=${meta.role}; exec sleep 600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`)
	code, _, errOut := cli(t, addr, "job", "run", "-detach", spec)
	must.Eq(t, 0, code, must.Sprint(errOut))

	code, _, errOut = cli(t, addr, "node", "meta", "apply", "-unset", "keep", "role=db", "empty=")
	must.Eq(t, 0, code, must.Sprint(errOut))

	code, out, errOut := cli(t, addr, "node", "meta", "read")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, `All Meta
empty =
rack  = r1
role  = db

Dynamic Meta
empty =
keep  = <unset>
role  = db

Static Meta
keep = x
rack = r1
`, out)

	waitFor(t, "the servers to see the new metadata", 20*time.Second, func() error {
		n, _, err := c.Nodes().Info(nodeID, nil)
		if err != nil {
			return err
		}
		if n.Meta["role"] != "db" || n.Meta["keep"] != "" || n.Meta["rack"] != "r1" {
			return fmt.Errorf("node meta %v", n.Meta)
		}
		if _, ok := n.Meta["keep"]; ok {
			return fmt.Errorf("keep is still set: %v", n.Meta)
		}
		return nil
	})

	t.Run("the waiting job is placed and sees the metadata", func(t *testing.T) {
		alloc := runningAlloc(t, c, "needs-db", 0)
		waitFor(t, "the task's log", 10*time.Second, func() error {
			code, out, errOut := cli(t, addr, "alloc", "logs", alloc.ID)
			if code != 0 || out != "role=db\n" {
				return fmt.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			return nil
		})
	})

	t.Run("-node-id and -json", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "node", "meta", "apply", "-node-id", nodeID[:8], "-unset", "role,empty", "keep=y")
		must.Eq(t, 0, code, must.Sprint(errOut))
		code, out, errOut := cli(t, addr, "node", "meta", "read", "-node-id", nodeID[:8], "-json")
		must.Eq(t, 0, code, must.Sprint(errOut))
		var m api.NodeMetaResponse
		must.NoError(t, json.Unmarshal([]byte(out), &m))
		must.Eq(t, map[string]string{"rack": "r1", "keep": "y"}, m.Meta)
		must.MapLen(t, 1, m.Dynamic, must.Sprint("unsetting a key only the dynamic metadata had forgets it"))
	})
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"nothing to do", []string{"apply"}, "Must specify -unset or at least 1 key=value pair"},
		{"bad key", []string{"apply", "bad key=1"}, `"bad key" is invalid; metadata keys must be valid dotted hcl identifiers`},
		{"unknown node", []string{"read", "-node-id", "ffffffff"}, `No node(s) with prefix or id "ffffffff" found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, append([]string{"node", "meta"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
}
