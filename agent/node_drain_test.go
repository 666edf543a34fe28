package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// drainCluster starts a server and two client agents and returns an API
// client of the server and the two clients' node IDs.
func drainCluster(t *testing.T) (*api.Client, string, string) {
	t.Helper()
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	client := func() *Agent {
		return NewTestAgent(t, func(c *config.Config) {
			c.DevMode = false
			c.Server.Enabled = false
			c.DataDir = t.TempDir()
			c.Client.Servers = []string{srv.RPCAddr()}
		})
	}
	c1, c2 := client(), client()
	return apiClient(t, srv), c1.Client().NodeID(), c2.Client().NodeID()
}

// waitFor retries check until it returns nil, for up to timeout.
func waitFor(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(check), wait.Timeout(timeout), wait.Gap(50*time.Millisecond)))
}

// The acceptance scenario of node drain: a raw_exec batch job sleeping on
// client 1; `drain -deadline 5s` lets it run until the deadline, then
// stops it and it is placed on client 2. The node ends ineligible, its
// drain complete.
func TestNodeDrain_DeadlineMovesBatchWork(t *testing.T) {
	c, node1, node2 := drainCluster(t)
	nodes := c.Nodes()

	// Client 2 out of the way so the job lands on client 1.
	_, err := nodes.ToggleEligibility(node2, false, nil)
	must.NoError(t, err)
	job := maxRunJob("drain-batch", "batch", 10*time.Minute, "exec sleep 600")
	register(t, c, job)
	first := jobAllocs(t, c, "drain-batch", 1, 20*time.Second, isRunning)
	must.SliceLen(t, 1, first)
	must.Eq(t, node1, first[0].NodeID)
	_, err = nodes.ToggleEligibility(node2, true, nil)
	must.NoError(t, err)

	resp, err := nodes.UpdateDrainOpts(node1, &api.DrainOptions{
		DrainSpec: &api.DrainSpec{Deadline: 5 * time.Second}, Meta: map[string]string{"reason": "kernel upgrade"},
	}, nil)
	must.NoError(t, err)
	must.Positive(t, resp.LastIndex)
	n1, _, err := nodes.Info(node1, nil)
	must.NoError(t, err)
	must.NotNil(t, n1.DrainStrategy)
	must.True(t, n1.Drain)
	must.Eq(t, api.NodeSchedulingIneligible, n1.SchedulingEligibility)
	forceDeadline := n1.DrainStrategy.ForceDeadline
	must.Eq(t, 5*time.Second, forceDeadline.Sub(n1.DrainStrategy.StartedAt))
	must.Eq(t, "kernel upgrade", n1.LastDrain.Meta["reason"])

	// The replacement runs on client 2.
	var moved []*api.AllocationListStub
	waitFor(t, 30*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("drain-batch", true, nil)
		if err != nil {
			return err
		}
		moved = nil
		for _, a := range allocs {
			if a.NodeID == node2 && a.ClientStatus == "running" {
				moved = append(moved, a)
			}
		}
		if len(moved) != 1 {
			return fmt.Errorf("no running alloc on client 2 yet: %v", maxRunSummary(allocs))
		}
		return nil
	})

	old, _, err := c.Allocations().Info(first[0].ID, nil)
	must.NoError(t, err)
	must.True(t, old.DesiredTransition.ShouldMigrate())
	must.Eq(t, "stop", old.DesiredStatus)
	repl, _, err := c.Allocations().Info(moved[0].ID, nil)
	must.NoError(t, err)
	must.Eq(t, old.ID, repl.PreviousAllocation)
	// Not before the deadline: the stop was planned after it.
	must.False(t, time.Unix(0, repl.CreateTime).Before(forceDeadline),
		must.Sprintf("replacement created %v, deadline %v", time.Unix(0, repl.CreateTime), forceDeadline))

	waitFor(t, 20*time.Second, func() error {
		n, _, err := nodes.Info(node1, nil)
		if err != nil {
			return err
		}
		if n.DrainStrategy != nil || n.LastDrain == nil || n.LastDrain.Status != api.DrainStatusComplete {
			return fmt.Errorf("drain not complete: %+v", n.LastDrain)
		}
		if n.SchedulingEligibility != api.NodeSchedulingIneligible {
			return fmt.Errorf("eligibility %s after the drain", n.SchedulingEligibility)
		}
		return nil
	})
	waitFor(t, 20*time.Second, func() error {
		a, _, err := c.Allocations().Info(old.ID, nil)
		if err != nil {
			return err
		}
		if a.ClientStatus == "running" || a.ClientStatus == "pending" {
			return fmt.Errorf("old alloc still %s", a.ClientStatus)
		}
		return nil
	})
}

// Eligibility and drain refusals, as Nomad words them.
func TestNodeDrain_Refusals(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	nodeID := a.Client().NodeID()
	// Batch work keeps a drain without deadline going.
	register(t, c, maxRunJob("drain-keep", "batch", 10*time.Minute, "exec sleep 600"))
	jobAllocs(t, c, "drain-keep", 1, 20*time.Second, isRunning)
	_, err := c.Nodes().UpdateDrain(nodeID, &api.DrainSpec{}, false, nil)
	must.NoError(t, err)
	_, err = c.Nodes().ToggleEligibility(nodeID, true, nil)
	must.ErrorContains(t, err, "can not set node's scheduling eligibility to eligible while it is draining")

	cases := []struct {
		path, body, want string
	}{
		{"/v1/node/" + nodeID + "/eligibility", `{"Eligibility":"maybe"}`, `invalid scheduling eligibility "maybe"`},
		{"/v1/node/not-a-uuid/drain", `{}`, `node ID "not-a-uuid" is not allowed`},
		{"/v1/node/12345678-abcd-efab-cdef-123456789abc/drain", `{}`, "node not found"},
	}
	for _, tc := range cases {
		resp := doRaw(t, a, "PUT", tc.path, tc.body)
		must.Greater(t, 399, resp.StatusCode)
		must.Less(t, 500, resp.StatusCode)
		must.StrContains(t, readBody(t, resp), tc.want)
	}
	must.Eq(t, 405, doRaw(t, a, "GET", "/v1/node/"+nodeID+"/drain", "").StatusCode)

	// An unknown node has no allocations, whatever its ID looks like.
	for _, id := range []string{"nope", "12345678-abcd-efab-cdef-123456789abc"} {
		allocs, _, err := c.Nodes().Allocations(id, nil)
		must.NoError(t, err, must.Sprint(id))
		must.SliceEmpty(t, allocs)
	}

	// Cancel with MarkEligible: eligible again, LastDrain canceled.
	_, err = c.Nodes().UpdateDrain(nodeID, nil, true, nil)
	must.NoError(t, err)
	n, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.Nil(t, n.DrainStrategy)
	must.Eq(t, api.NodeSchedulingEligible, n.SchedulingEligibility)
	must.Eq(t, api.DrainStatusCanceled, n.LastDrain.Status)
}

// With ACLs on, drain, eligibility, evaluate and purge need node:write; a
// node reader sees a node's allocations only in namespaces it may read.
func TestNodeDrain_ACL(t *testing.T) {
	a, c, _ := aclAgent(t)
	nodeID := a.Client().NodeID()
	register(t, c, maxRunJob("acl-drain", "batch", 10*time.Minute, "exec sleep 600"))
	jobAllocs(t, c, "acl-drain", 1, 20*time.Second, isRunning)

	token := func(name, rules string) *api.Client {
		_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
		must.NoError(t, err)
		tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
		must.NoError(t, err)
		tc := apiClient(t, a)
		tc.SetSecretID(tok.SecretID)
		return tc
	}
	reader := token("node-reader", `node { policy = "read" }`)
	writer := token("node-writer", `node { policy = "write" }`)

	_, err := reader.Nodes().UpdateDrain(nodeID, &api.DrainSpec{}, false, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, err = reader.Nodes().ToggleEligibility(nodeID, false, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = reader.Nodes().ForceEvaluate(nodeID, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = reader.Nodes().Purge(nodeID, nil)
	must.ErrorContains(t, err, "Permission denied")
	allocs, _, err := reader.Nodes().Allocations(nodeID, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs, must.Sprint("no read-job in default"))
	allocs, _, err = c.Nodes().Allocations(nodeID, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)

	_, err = writer.Nodes().ToggleEligibility(nodeID, false, nil)
	must.NoError(t, err)
	_, err = writer.Nodes().UpdateDrain(nodeID, nil, true, nil)
	must.NoError(t, err)
	n, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.Eq(t, api.NodeSchedulingEligible, n.SchedulingEligibility)
}
