package agent

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

func poolNames(t *testing.T, c *api.Client, prefix string) []string {
	t.Helper()
	list, qm, err := c.NodePools().PrefixList(prefix, nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	return names
}

func TestNodePools_HTTP_CRUD(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	pools := c.NodePools()

	must.Eq(t, []string{"all", "default"}, poolNames(t, c, ""))
	def, _, err := pools.Info("default", nil)
	must.NoError(t, err)
	must.Eq(t, "Default node pool.", def.Description)

	_, err = pools.Register(&api.NodePool{Name: "dev-1", NodeIdentityTTL: 720 * time.Hour, Meta: map[string]string{"env": "dev"}}, nil)
	must.NoError(t, err)
	got, _, err := pools.Info("dev-1", nil)
	must.NoError(t, err)
	must.Eq(t, 720*time.Hour, got.NodeIdentityTTL)
	must.Eq(t, map[string]string{"env": "dev"}, got.Meta)

	got.Description = "test"
	_, err = pools.Register(got, nil)
	must.NoError(t, err)
	again, _, err := pools.Info("dev-1", nil)
	must.NoError(t, err)
	must.Eq(t, "test", again.Description)
	must.Eq(t, got.CreateIndex, again.CreateIndex)

	must.Eq(t, []string{"default", "dev-1"}, poolNames(t, c, "d"))
	found, _, err := c.Search().PrefixSearch("de", contexts.NodePools, nil)
	must.NoError(t, err)
	must.Eq(t, []string{"default", "dev-1"}, found.Matches[contexts.NodePools])
	page, _, err := pools.PrefixList("d", &api.QueryOptions{PerPage: 1})
	must.NoError(t, err)
	must.SliceLen(t, 1, page)
	must.Eq(t, "default", page[0].Name)

	_, err = pools.Delete("dev-1", nil)
	must.NoError(t, err)
	_, _, err = pools.Info("dev-1", nil)
	must.ErrorContains(t, err, "not found")
	must.Eq(t, http.StatusNotFound, statusOf(err))

	// A name with a slash is simply not found.
	_, _, err = pools.Info("node/pool", nil)
	must.ErrorContains(t, err, "not found")
	_, err = pools.Delete("node/pool", nil)
	must.ErrorContains(t, err, "not found")
}

func TestNodePools_HTTP_Refusals(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	cases := []struct {
		name    string
		write   func() error
		wantErr string
	}{
		{"change all", func() error {
			_, err := c.NodePools().Register(&api.NodePool{Name: "all", Description: "x"}, nil)
			return err
		}, `modifying node pool "all" is not allowed`},
		{"change default", func() error {
			_, err := c.NodePools().Register(&api.NodePool{Name: "default", Description: "x"}, nil)
			return err
		}, `modifying node pool "default" is not allowed`},
		{"delete default", func() error { _, err := c.NodePools().Delete("default", nil); return err }, `deleting built-in node pool "default" is not allowed`},
		{"bad name", func() error { _, err := c.NodePools().Register(&api.NodePool{Name: "a b"}, nil); return err }, `invalid name "a b"`},
		{"scheduler config", func() error {
			_, err := c.NodePools().Register(&api.NodePool{Name: "sc", SchedulerConfiguration: &api.NodePoolSchedulerConfiguration{SchedulerAlgorithm: api.SchedulerAlgorithmSpread}}, nil)
			return err
		}, "SchedulerConfiguration (scheduler_config) is not supported"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.write()
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, http.StatusBadRequest, statusOf(err))
		})
	}
	must.Eq(t, []string{"all", "default"}, poolNames(t, c, ""))
}

func TestNodePools_HTTP_NodesJobsAndPlacement(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	nodeID := a.client.NodeID()

	for _, pool := range []string{"default", "all"} {
		nodes, _, err := c.NodePools().ListNodes(pool, nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, nodes, must.Sprintf("pool %s", pool))
		must.Eq(t, nodeID, nodes[0].ID)
	}

	// A job in an unknown pool is refused, naming it.
	job := mockJob("gpu-job", 1)
	job.NodePool = new("gpu")
	_, _, err := c.Jobs().Register(job, nil)
	must.ErrorContains(t, err, `job "gpu-job" is in nonexistent node pool "gpu"`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))

	// In an existing pool without nodes it is not placed on the default
	// pool's node, and the eval says why.
	_, err = c.NodePools().Register(&api.NodePool{Name: "gpu"}, nil)
	must.NoError(t, err)
	nodes, _, err := c.NodePools().ListNodes("gpu", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, nodes)
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	eval := waitEvalTerminal(t, c, resp.EvalID)
	m := eval.FailedTGAllocs["g"]
	must.NotNil(t, m)
	must.Eq(t, "gpu", m.NodePool)
	must.Eq(t, 0, m.NodesInPool)
	allocs, _, err := c.Jobs().Allocations("gpu-job", false, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	raw, err := http.Get(a.HTTPAddr() + "/v1/evaluation/" + resp.EvalID)
	must.NoError(t, err)
	body, err := io.ReadAll(raw.Body)
	raw.Body.Close()
	must.NoError(t, err)
	must.StrContains(t, string(body), `no ready nodes in node pool \"gpu\"`)

	jobs, _, err := c.NodePools().ListJobs("gpu", nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, jobs)
	must.Eq(t, "gpu-job", jobs[0].ID)

	// A pool with a job or a node cannot be deleted.
	_, err = c.NodePools().Delete("gpu", nil)
	must.ErrorContains(t, err, `node pool "gpu" has non-terminal jobs in regions: [global]`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))
}
