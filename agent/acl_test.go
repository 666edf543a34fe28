package agent

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// TestACL_EveryRouteHasARule fails for an HTTP route registered without an
// entry in httpRules.
func TestACL_EveryRouteHasARule(t *testing.T) {
	h := newHTTPHandler(&Agent{config: config.Default(), logger: hclog.NewInterceptLogger(nil)})
	var missing []string
	for _, rt := range h.routes {
		if _, ok := h.rules[rt.path]; !ok {
			missing = append(missing, rt.path)
		}
	}
	sort.Strings(missing)
	must.Eq(t, []string(nil), missing, must.Sprint("routes without an ACL rule in httpRules"))
}

func aclAgent(t *testing.T) (*Agent, *api.Client, *api.ACLToken) {
	a := NewTestAgent(t, func(c *config.Config) { c.ACL.Enabled = true })
	c := apiClient(t, a)
	root, _, err := c.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	must.Eq(t, "management", root.Type)
	c.SetSecretID(root.SecretID)
	return a, c, root
}

// TestACL_Agent: with ACLs on, a real agent refuses anonymous callers,
// lets a token do what its policy grants and no more, and its own client
// node still registers, heartbeats and runs work with its node secret.
func TestACL_Agent(t *testing.T) {
	a, c, root := aclAgent(t)

	// The management token runs a real raw_exec job to completion: the
	// client's node RPCs authenticate with the node secret.
	job := api.NewBatchJob("acl", "acl", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.AddTask(shTask("t", "echo ok"))
	job.AddTaskGroup(tg)
	register(t, c, job)
	allocs := jobAllocs(t, c, "acl", 1, 30*time.Second, isTerminal)
	must.Eq(t, "complete", allocs[0].ClientStatus, must.Sprint(allocs[0].TaskStates))

	// Anonymous: refused, with Nomad's status and text.
	anon := apiClient(t, a)
	_, _, err := anon.Jobs().List(nil)
	must.ErrorContains(t, err, "403")
	must.ErrorContains(t, err, "Permission denied")
	_, err = anon.Agent().Self()
	must.ErrorContains(t, err, "Permission denied")
	// Public routes stay open.
	code, _ := httpDo(t, http.MethodGet, a.HTTPAddr()+"/v1/metrics")
	must.Eq(t, http.StatusOK, code)
	code, _ = httpDo(t, http.MethodGet, a.HTTPAddr()+"/.well-known/jwks.json")
	must.Eq(t, http.StatusOK, code)

	// A read token: lists and reads, cannot register or read logs.
	_, err = c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "reader", Rules: `namespace "default" { policy = "read" }`}, nil)
	must.NoError(t, err)
	tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: "r", Type: "client", Policies: []string{"reader"}}, nil)
	must.NoError(t, err)
	rc := apiClient(t, a)
	rc.SetSecretID(tok.SecretID)
	jobs, _, err := rc.Jobs().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	_, _, err = rc.Jobs().Register(job, nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = rc.Nodes().List(nil)
	must.ErrorContains(t, err, "Permission denied")
	_, _, err = rc.Jobs().List(&api.QueryOptions{Namespace: "other"})
	must.ErrorContains(t, err, "Permission denied")
	req, err := http.NewRequest(http.MethodGet, a.HTTPAddr()+"/v1/client/fs/logs/"+allocs[0].ID+"?task=t&type=stdout&plain=true", nil)
	must.NoError(t, err)
	req.Header.Set("X-Nomad-Token", tok.SecretID)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusForbidden, resp.StatusCode, must.Sprint("read-logs is not in the read policy"))
	req.Header.Set("X-Nomad-Token", root.SecretID)
	resp, err = http.DefaultClient.Do(req)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)

	// Self, one-time token exchange, and the token listing without secrets.
	self, _, err := rc.ACLTokens().Self(nil)
	must.NoError(t, err)
	must.Eq(t, tok.AccessorID, self.AccessorID)
	ott, _, err := rc.ACLTokens().UpsertOneTimeToken(nil)
	must.NoError(t, err)
	exchanged, _, err := anon.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	must.NoError(t, err)
	must.Eq(t, tok.AccessorID, exchanged.AccessorID)
	_, _, err = anon.ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	must.ErrorContains(t, err, "Permission denied", must.Sprint("a one-time token works once"))
	list, _, err := c.ACLTokens().List(nil)
	must.NoError(t, err)
	must.Len(t, 2, list)
	_, _, err = rc.ACLTokens().List(nil)
	must.ErrorContains(t, err, "Permission denied")

	// A second bootstrap is refused with the reset index, as a bad
	// request (Nomad's 400), not a server failure.
	_, _, err = anon.ACLTokens().Bootstrap(nil)
	must.ErrorContains(t, err, "Unexpected response code: 400 (ACL bootstrap already done (reset index: ")

	// Minting a client introduction token takes node write: management
	// may, the read-only token may not.
	intro, _, err := c.ACLIdentity().CreateClientIntroductionToken(&api.ACLIdentityClientIntroductionTokenRequest{}, nil)
	must.NoError(t, err)
	must.Eq(t, 2, strings.Count(intro.JWT, "."), must.Sprint(intro.JWT))
	_, _, err = rc.ACLIdentity().CreateClientIntroductionToken(&api.ACLIdentityClientIntroductionTokenRequest{}, nil)
	must.ErrorContains(t, err, "Permission denied")
}

// TestACL_ManagementTokenReachesEveryRead sends the management token to
// the read routes: a handler that drops the caller's token on the way to
// a server RPC shows up here as a 403.
func TestACL_ManagementTokenReachesEveryRead(t *testing.T) {
	a, c, root := aclAgent(t)
	job := api.NewBatchJob("sweep", "sweep", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.AddTask(shTask("t", "echo ok"))
	job.AddTaskGroup(tg)
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := jobAllocs(t, c, "sweep", 1, 30*time.Second, isTerminal)
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	alloc, node, eval := allocs[0].ID, nodes[0].ID, resp.EvalID

	paths := []string{
		"/v1/jobs", "/v1/jobs/statuses", "/v1/job/sweep", "/v1/job/sweep/allocations", "/v1/job/sweep/evaluations",
		"/v1/job/sweep/summary", "/v1/job/sweep/versions", "/v1/job/sweep/scale", "/v1/job/sweep/submission?version=0",
		"/v1/evaluations", "/v1/evaluations/count", "/v1/evaluation/" + eval, "/v1/evaluation/" + eval + "?related=true",
		"/v1/evaluation/" + eval + "/allocations", "/v1/allocations", "/v1/allocation/" + alloc,
		"/v1/nodes", "/v1/node/" + node, "/v1/node/" + node + "/allocations", "/v1/node/pools", "/v1/node/pool/default",
		"/v1/node/pool/default/nodes", "/v1/node/pool/default/jobs", "/v1/namespaces", "/v1/namespace/default",
		"/v1/agent/self", "/v1/agent/members", "/v1/agent/servers", "/v1/agent/schedulers", "/v1/agent/schedulers/config",
		"/v1/agent/host", "/v1/operator/raft/configuration", "/v1/operator/autopilot/configuration",
		"/v1/operator/autopilot/health", "/v1/operator/scheduler/configuration", "/v1/operator/keyring/keys",
		"/v1/status/leader", "/v1/status/peers", "/v1/regions", "/v1/queue", "/v1/queue/jobs",
		"/v1/client/stats", "/v1/client/allocation/" + alloc + "/stats",
		"/v1/client/fs/logs/" + alloc + "?task=t&type=stdout&plain=true",
		"/v1/acl/policies", "/v1/acl/tokens", "/v1/acl/token/self", "/v1/acl/roles", "/v1/metrics",
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, a.HTTPAddr()+p, nil)
			must.NoError(t, err)
			req.Header.Set("X-Nomad-Token", root.SecretID)
			resp, err := http.DefaultClient.Do(req)
			must.NoError(t, err)
			resp.Body.Close()
			must.NotEq(t, http.StatusForbidden, resp.StatusCode)
			must.NotEq(t, http.StatusUnauthorized, resp.StatusCode)
		})
	}
}
