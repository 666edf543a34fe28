package agent

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// scopeAgent starts an ACL agent with the batch queue on and, in each of
// namespaces a and b, a running service job "svc-<ns>" with a scaling
// policy (allocs, evals, a policy), a batch job "q-<ns>" that cannot be
// placed (a queue entry) and a variable "app/<ns>". It returns the agent
// and its management client.
func scopeAgent(t *testing.T) (*Agent, *api.Client) {
	return scopeAgentIn(t, "a", "b")
}

// scopeAgentIn is scopeAgent with the objects in namespaces nss ("default"
// is used as it is, the others are created).
func scopeAgentIn(t *testing.T, nss ...string) (*Agent, *api.Client) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.ACL.Enabled = true
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: "fifo", ConcurrentPlacements: 1, WorkloadTimeout: time.Minute,
		}
	})
	root := apiClient(t, a)
	tok, _, err := root.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root.SetSecretID(tok.SecretID)
	for _, ns := range nss {
		if ns != structs.DefaultNamespace {
			_, err := root.Namespaces().Register(&api.Namespace{Name: ns}, nil)
			must.NoError(t, err)
		}
		q := &api.WriteOptions{Namespace: ns}

		svc := api.NewServiceJob("svc-"+ns, "svc-"+ns, "global", 50)
		svc.Namespace = new(ns)
		svc.Datacenters = []string{"*"}
		tg := api.NewTaskGroup("web", 1)
		task := api.NewTask("t", "mock_driver")
		task.Config = map[string]any{"run_for": "1h"}
		task.Require(&api.Resources{CPU: new(20), MemoryMB: new(16)})
		tg.AddTask(task)
		tg.Scaling = &api.ScalingPolicy{Min: new(int64(1)), Max: new(int64(3))}
		svc.AddTaskGroup(tg)
		_, _, err := root.Jobs().Register(svc, q)
		must.NoError(t, err)

		queued := unplaceableJob("q-"+ns, "batch", nil)
		queued.Namespace = new(ns)
		_, _, err = root.Jobs().Register(queued, q)
		must.NoError(t, err)

		_, _, err = root.Variables().Create(&api.Variable{Namespace: ns, Path: "app/" + ns, Items: api.VariableItems{"k": "v"}}, q)
		must.NoError(t, err)
	}
	all := &api.QueryOptions{Namespace: "*"}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _, err := root.Allocations().List(all)
		var entries []structs.BatchQueueListEntry
		_, qerr := root.Raw().Query("/v1/queue/jobs?namespace=*", &entries, nil)
		return err == nil && qerr == nil && len(allocs) == len(nss) && len(entries) == len(nss)
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	return a, root
}

// tokenClient makes a client token with the given rules and returns a
// client that uses it.
func tokenClient(t *testing.T, a *Agent, root *api.Client, name, rules string) *api.Client {
	t.Helper()
	_, err := root.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
	must.NoError(t, err)
	tok, _, err := root.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
	must.NoError(t, err)
	c := apiClient(t, a)
	c.SetSecretID(tok.SecretID)
	return c
}

// namespacesSeen lists, sorted, the namespaces of what every listing
// answers over namespace=* ("403" for a refusal).
func namespacesSeen(t *testing.T, c *api.Client) map[string][]string {
	t.Helper()
	all := &api.QueryOptions{Namespace: "*"}
	out := map[string][]string{}
	seen := func(name string, err error, nss ...string) {
		if err != nil {
			must.ErrorContains(t, err, "403", must.Sprintf("%s: %v", name, err))
			must.ErrorContains(t, err, "Permission denied", must.Sprint(name))
			out[name] = []string{"403"}
			return
		}
		got := []string{}
		for _, ns := range nss {
			if !slices.Contains(got, ns) {
				got = append(got, ns)
			}
		}
		sort.Strings(got)
		out[name] = got
	}

	jobs, _, err := c.Jobs().List(all)
	var nss []string
	for _, j := range jobs {
		nss = append(nss, j.Namespace)
	}
	seen("jobs", err, nss...)

	allocs, _, err := c.Allocations().List(all)
	nss = nil
	for _, al := range allocs {
		nss = append(nss, al.Namespace)
	}
	seen("allocs", err, nss...)

	evals, _, err := c.Evaluations().List(all)
	nss = nil
	for _, e := range evals {
		nss = append(nss, e.Namespace)
	}
	seen("evals", err, nss...)

	_, _, err = c.Deployments().List(all)
	seen("deployments", err)

	vars, _, err := c.Variables().List(all)
	nss = nil
	for _, v := range vars {
		nss = append(nss, v.Namespace)
	}
	seen("vars", err, nss...)

	policies, _, err := c.Scaling().ListPolicies(all)
	nss = nil
	for _, p := range policies {
		nss = append(nss, p.Target["Namespace"])
	}
	seen("scaling", err, nss...)

	var entries []structs.BatchQueueListEntry
	_, err = c.Raw().Query("/v1/queue/jobs?namespace=*", &entries, nil)
	nss = nil
	for _, e := range entries {
		nss = append(nss, e.Namespace)
	}
	seen("queue", err, nss...)

	statuses, err := jobStatusesNamespaces(c)
	seen("statuses", err, statuses...)

	// Searches answer IDs; the job IDs name their namespace.
	prefix, _, err := c.Search().PrefixSearch("", "jobs", all)
	nss = nil
	if err == nil {
		for _, id := range prefix.Matches["jobs"] {
			nss = append(nss, id[len(id)-1:])
		}
	}
	seen("search", err, nss...)

	fuzzy, _, err := c.Search().FuzzySearch("svc-", "all", all)
	nss = nil
	if err == nil {
		for _, m := range fuzzy.Matches["jobs"] {
			nss = append(nss, m.Scope[0])
		}
	}
	seen("fuzzy", err, nss...)
	return out
}

func jobStatusesNamespaces(c *api.Client) ([]string, error) {
	var out []struct{ Namespace string }
	_, err := c.Raw().Query("/v1/jobs/statuses?namespace=*", &out, nil)
	var nss []string
	for _, j := range out {
		nss = append(nss, j.Namespace)
	}
	return nss, err
}

// TestACL_WildcardListingsKeepReadableNamespaces: over namespace=*, every
// listing answers a namespace-scoped token only the entries of the
// namespaces it may read, management all of them, and a token for no
// namespace a refusal where Nomad refuses (jobs, allocs, evals,
// deployments, queue, a search context named) or an empty list where
// Nomad answers one (variables, scaling policies, a search of all
// contexts).
func TestACL_WildcardListingsKeepReadableNamespaces(t *testing.T) {
	a, root := scopeAgent(t)
	reader := tokenClient(t, a, root, "read-a", `
namespace "a" {
  policy = "read"
  variables {
    path "*" { capabilities = ["read", "list"] }
  }
}`)
	nobody := tokenClient(t, a, root, "nodes-only", `node { policy = "read" }`)

	both := []string{"a", "b"}
	must.Eq(t, map[string][]string{
		"jobs": both, "allocs": both, "evals": both, "deployments": {}, "vars": both, "scaling": both,
		"queue": both, "statuses": both, "search": both, "fuzzy": both,
	}, namespacesSeen(t, root), must.Sprint("management sees every namespace"))

	onlyA := []string{"a"}
	must.Eq(t, map[string][]string{
		"jobs": onlyA, "allocs": onlyA, "evals": onlyA, "deployments": {}, "vars": onlyA, "scaling": onlyA,
		"queue": onlyA, "statuses": onlyA, "search": onlyA, "fuzzy": onlyA,
	}, namespacesSeen(t, reader), must.Sprint("a read token sees namespace a only"))

	denied := []string{"403"}
	must.Eq(t, map[string][]string{
		"jobs": denied, "allocs": denied, "evals": denied, "deployments": denied, "vars": {}, "scaling": {},
		"queue": denied, "statuses": denied, "search": denied, "fuzzy": {},
	}, namespacesSeen(t, nobody), must.Sprint("a token for no namespace"))

	// Naming the other namespace is refused outright.
	_, _, err := reader.Jobs().List(&api.QueryOptions{Namespace: "b"})
	must.ErrorContains(t, err, "403")
	var entries []structs.BatchQueueListEntry
	_, err = reader.Raw().Query("/v1/queue/jobs?namespace=b", &entries, nil)
	must.ErrorContains(t, err, "403")
	// Naming its own namespace answers only that namespace's allocs.
	allocs, _, err := reader.Allocations().List(&api.QueryOptions{Namespace: "a"})
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.Eq(t, "a", allocs[0].Namespace)
	// A search context the token may not search, asked for by name.
	_, _, err = reader.Search().PrefixSearch("", "nodes", &api.QueryOptions{Namespace: "*"})
	must.ErrorContains(t, err, "403")

}
