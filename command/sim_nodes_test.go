package command

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

// TestSimNodes_DevAgentRunsBatchJob is the node simulator's smoke test: a
// dev agent with 50 simulated nodes lists them in `nomad node status`
// and runs a count-100 mock_driver batch job to completion, every alloc
// on a simulated node.
func TestSimNodes_DevAgentRunsBatchJob(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.SimNodes = 50 })
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	simIDs := map[string]bool{}
	var nodes []*api.NodeListStub
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		var err error
		nodes, _, err = c.Nodes().List(nil)
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range nodes {
			if n.Status == "ready" && strings.HasPrefix(n.Name, "sim-") {
				ready++
				simIDs[n.ID] = true
			}
		}
		if ready != 50 {
			return fmt.Errorf("%d of 50 simulated nodes ready", ready)
		}
		return nil
	}), wait.Timeout(60*time.Second), wait.Gap(20*time.Millisecond)))
	must.Eq(t, 50, len(nodes), must.Sprint("only the simulated nodes register: no real client runs"))

	code, out, errOut := cli(t, addr, "node", "status")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, 51, len(strings.Split(strings.TrimSpace(out), "\n")), must.Sprint("a header and 50 nodes: ", out))
	for _, name := range []string{"sim-0001", "sim-0025", "sim-0050"} {
		must.StrContains(t, out, name)
	}

	spec := writeSpec(t, "sim.nomad.hcl", `
job "simjob" {
  type = "batch"
  group "g" {
    count = 100
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "10ms"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`)
	code, out, errOut = cli(t, addr, "job", "run", "-detach", spec)
	must.Eq(t, 0, code, must.Sprint(errOut, out))
	waitJobDead(t, addr, "simjob")

	allocs, _, err := c.Jobs().Allocations("simjob", false, nil)
	must.NoError(t, err)
	must.Eq(t, 100, len(allocs))
	for _, al := range allocs {
		must.Eq(t, "complete", al.ClientStatus, must.Sprintf("alloc %s: %s", al.ID, al.ClientDescription))
		must.True(t, simIDs[al.NodeID], must.Sprintf("alloc %s placed on %s, not a simulated node", al.ID, al.NodeID))
		ts := al.TaskStates["t"]
		must.NotNil(t, ts)
		must.Eq(t, "dead", ts.State)
		must.False(t, ts.Failed)
	}
}

// TestSimNodes_FlagRefusesNegative: -sim-nodes takes effect through the
// agent config, whose validation names the key and the value.
func TestSimNodes_FlagRefusesNegative(t *testing.T) {
	code, _, errOut := run(t, "", "agent", "-dev", "-sim-nodes", "-3")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "client.sim_nodes -3 is not allowed: must be 0 or more")
}
