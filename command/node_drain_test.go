package command

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

func TestNodeDrainUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"node", "drain", "x1"}, "Either the '-enable' or '-disable' flag must be set, unless using '-monitor'"},
		{[]string{"node", "drain", "-enable", "-disable", "x1"}, "Either the '-enable' or '-disable' flag must be set"},
		{[]string{"node", "drain", "-monitor", "-enable", "x1"}, "The -monitor flag cannot be used with the '-enable' or '-disable' flags"},
		{[]string{"node", "drain", "-enable"}, "Node ID must be specified if -self isn't being used"},
		{[]string{"node", "drain", "-enable", "-self", "x1"}, "Node ID must be specified if -self isn't being used"},
		{[]string{"node", "drain", "-disable", "-force", "x1"}, "-disable can't be combined with flags configuring drain strategy"},
		{[]string{"node", "drain", "-enable", "-deadline", "1m", "-force", "x1"}, "-deadline can't be combined with -force or -no-deadline"},
		{[]string{"node", "drain", "-enable", "-force", "-no-deadline", "x1"}, "-force and -no-deadline are mutually exclusive"},
		{[]string{"node", "drain", "-enable", "-deadline", "soon", "x1"}, `Failed to parse deadline "soon"`},
		{[]string{"node", "drain", "-enable", "-deadline", "-5s", "x1"}, "A positive drain duration must be given"},
		{[]string{"node", "eligibility", "x1"}, "Either the '-enable' or '-disable' flag must be set"},
		{[]string{"node", "eligibility", "-enable", "-disable", "x1"}, "Either the '-enable' or '-disable' flag must be set"},
		{[]string{"node", "eligibility", "-enable"}, "Node ID must be specified if -self isn't being used"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.args), func(t *testing.T) {
			code, _, errOut := run(t, "", c.args...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, c.want)
		})
	}
}

func TestNodeEligibilityCommand(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	id := a.Client().NodeID()

	code, out, errOut := cli(t, addr, "node", "eligibility", "-disable", id)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, fmt.Sprintf("Node %q scheduling eligibility set: ineligible for scheduling\n", id), out)
	code, out, _ = cli(t, addr, "node", "status")
	must.Eq(t, 0, code)
	must.StrContains(t, normalize(out), "false  ineligible  ready")

	code, out, errOut = cli(t, addr, "node", "eligibility", "-enable", "-self")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, fmt.Sprintf("Node %q scheduling eligibility set: eligible for scheduling\n", id), out)

	code, _, errOut = cli(t, addr, "node", "eligibility", "-enable", "12345678-abcd")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `No node(s) with prefix or id "12345678-abcd" found`)
	code, _, errOut = cli(t, addr, "node", "eligibility", "-enable", "1")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Identifier must contain at least two characters.")
}

func TestNodeDrainCommand(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	id := a.Client().NodeID()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)

	code, _, errOut := cli(t, addr, "node", "drain", "-monitor", id)
	must.Eq(t, 0, code)
	must.StrContains(t, errOut, "No drain strategy set")

	// A prefix asks first; "n" cancels.
	code, out, _ := run(t, "n\n", "node", "drain", "-address", addr, "-enable", id[:8])
	must.Eq(t, 0, code)
	must.StrContains(t, out, fmt.Sprintf("Are you sure you want to enable drain mode for node %q? [y/N]", id))
	must.StrContains(t, out, "Canceling drain toggle")
	n, _, err := c.Nodes().Info(id, nil)
	must.NoError(t, err)
	must.Nil(t, n.DrainStrategy)

	// Long batch work: the drain waits for its deadline, stops it and the
	// monitor returns once nothing runs; the job's replacement is blocked
	// since the only node is ineligible.
	job := writeSpec(t, "long.nomad.hcl", `
job "long" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "10m"
      }
    }
  }
}
`)
	code, out, errOut = cli(t, addr, "job", "run", "-detach", job)
	must.Eq(t, 0, code, must.Sprint(errOut, out))
	waitRunning(t, c, "long")

	code, out, errOut = cli(t, addr, "node", "drain", "-enable", "-deadline", "1s", "-m", "maintenance", "-meta", "ticket=42", "-yes", id)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, fmt.Sprintf("Node %q drain strategy set", id))
	must.StrContains(t, out, "Ctrl-C to stop monitoring: will not cancel the node drain")
	must.StrContains(t, out, fmt.Sprintf("Drain complete for node %s", id))
	must.StrContains(t, out, fmt.Sprintf("All allocations on node %q have stopped", id))
	n, _, err = c.Nodes().Info(id, nil)
	must.NoError(t, err)
	must.Nil(t, n.DrainStrategy)
	must.Eq(t, api.NodeSchedulingIneligible, n.SchedulingEligibility)
	must.Eq(t, map[string]string{"message": "maintenance", "ticket": "42"}, n.LastDrain.Meta)

	// -disable with -keep-ineligible leaves the node ineligible; without
	// it the node is eligible again.
	code, out, errOut = cli(t, addr, "node", "drain", "-disable", "-keep-ineligible", "-yes", id)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, fmt.Sprintf("Node %q drain strategy unset\n", id), out)
	n, _, _ = c.Nodes().Info(id, nil)
	must.Eq(t, api.NodeSchedulingIneligible, n.SchedulingEligibility)
	code, _, errOut = cli(t, addr, "node", "drain", "-disable", "-self")
	must.Eq(t, 0, code, must.Sprint(errOut))
	n, _, _ = c.Nodes().Info(id, nil)
	must.Eq(t, api.NodeSchedulingEligible, n.SchedulingEligibility)

	// -detach returns at once and -force stops at once.
	code, out, errOut = cli(t, addr, "node", "drain", "-enable", "-force", "-detach", "-yes", id)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, fmt.Sprintf("Node %q drain strategy set\n", id), out)
}

// waitRunning waits until a job has a running allocation.
func waitRunning(t *testing.T, c *api.Client, jobID string) {
	t.Helper()
	_, _, err := c.Jobs().Info(jobID, nil)
	must.NoError(t, err)
	for i := 0; ; i++ {
		allocs, meta, err := c.Jobs().Allocations(jobID, false, nil)
		must.NoError(t, err)
		for _, a := range allocs {
			if a.ClientStatus == "running" {
				return
			}
		}
		if i > 200 {
			t.Fatalf("job %s has no running alloc", jobID)
		}
		// Block on the next change rather than sleep.
		_, _, _ = c.Jobs().Allocations(jobID, false, &api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 5e9})
	}
}

func TestFormatDrain(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 5, 0, time.UTC)
	cases := []struct {
		name string
		node *api.Node
		want string
	}{
		{"not draining", &api.Node{}, "false"},
		{"deadline", &api.Node{DrainStrategy: &api.DrainStrategy{DrainSpec: api.DrainSpec{Deadline: 5 * time.Second}, ForceDeadline: at}}, "true; " + formatTime(at) + " deadline"},
		{"no deadline, ignoring system", &api.Node{DrainStrategy: &api.DrainStrategy{DrainSpec: api.DrainSpec{IgnoreSystemJobs: true}}}, "true; no deadline; ignoring system jobs"},
		{"forced", &api.Node{DrainStrategy: &api.DrainStrategy{DrainSpec: api.DrainSpec{Deadline: -time.Second}}}, "true; force drain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must.Eq(t, c.want, formatDrain(c.node))
		})
	}
}
