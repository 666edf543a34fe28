package agent

import (
	"errors"
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// statusOf returns the HTTP status of an api client error, or 0.
func statusOf(err error) int {
	var ue api.UnexpectedResponseError
	if errors.As(err, &ue) {
		return ue.StatusCode()
	}
	return 0
}

func namespaceNames(t *testing.T, c *api.Client, prefix string) []string {
	t.Helper()
	list, qm, err := c.Namespaces().PrefixList(prefix, nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	var names []string
	for _, ns := range list {
		names = append(names, ns.Name)
	}
	return names
}

func TestNamespaces_HTTP_CRUD(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	nss := c.Namespaces()

	must.Eq(t, []string{"default"}, namespaceNames(t, c, ""))

	wm, err := nss.Register(&api.Namespace{Name: "foo-a", Description: "first", Meta: map[string]string{"batch_queue_weight": "3"}}, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	_, err = nss.Register(&api.Namespace{Name: "foo-b"}, nil)
	must.NoError(t, err)

	// The client sorts by CreateIndex, newest first.
	must.Eq(t, []string{"foo-b", "foo-a", "default"}, namespaceNames(t, c, ""))
	must.Eq(t, []string{"foo-b"}, namespaceNames(t, c, "foo-b"))
	found, _, err := c.Search().PrefixSearch("foo", contexts.Namespaces, nil)
	must.NoError(t, err)
	must.Eq(t, []string{"foo-a", "foo-b"}, found.Matches[contexts.Namespaces])

	got, _, err := nss.Info("foo-a", nil)
	must.NoError(t, err)
	must.Eq(t, "first", got.Description)
	must.Eq(t, map[string]string{"batch_queue_weight": "3"}, got.Meta)
	must.Positive(t, got.CreateIndex)

	// An update keeps CreateIndex.
	_, err = nss.Register(&api.Namespace{Name: "foo-a", Description: "second"}, nil)
	must.NoError(t, err)
	again, _, err := nss.Info("foo-a", nil)
	must.NoError(t, err)
	must.Eq(t, "second", again.Description)
	must.Eq(t, got.CreateIndex, again.CreateIndex)
	must.Greater(t, got.ModifyIndex, again.ModifyIndex)

	_, err = nss.Delete("foo-a", nil)
	must.NoError(t, err)
	must.Eq(t, []string{"foo-b", "default"}, namespaceNames(t, c, ""))

	_, _, err = nss.Info("foo-a", nil)
	must.ErrorContains(t, err, "not found")
	must.Eq(t, http.StatusNotFound, statusOf(err))
}

func TestNamespaces_HTTP_Refusals(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	cases := []struct {
		name    string
		ns      *api.Namespace
		wantErr string
	}{
		{"bad name", &api.Namespace{Name: "*"}, `invalid name "*".`},
		{"quota", &api.Namespace{Name: "q", Quota: "small"}, `Quota "small" is not supported`},
		{"node pool config", &api.Namespace{Name: "p", NodePoolConfiguration: &api.NamespaceNodePoolConfiguration{Default: "gpu"}}, "NodePoolConfiguration (node_pool_config) is not supported"},
		{"vault", &api.Namespace{Name: "v", VaultConfiguration: &api.NamespaceVaultConfiguration{Default: "x"}}, "VaultConfiguration (vault) is not supported"},
		{"consul", &api.Namespace{Name: "c", ConsulConfiguration: &api.NamespaceConsulConfiguration{Default: "x"}}, "ConsulConfiguration (consul) is not supported"},
		{"claims", &api.Namespace{Name: "e", RequiredExtraClaims: map[string]string{"a": "b"}}, "RequiredExtraClaims and OptionalExtraClaims are not supported"},
		{"queue weight not a number", &api.Namespace{Name: "w", Meta: map[string]string{"batch_queue_weight": "heavy"}}, `meta batch_queue_weight "heavy" is not allowed: must be a number greater than 0`},
		{"queue weight zero", &api.Namespace{Name: "w", Meta: map[string]string{"batch_queue_weight": "0"}}, `meta batch_queue_weight "0" is not allowed`},
		{"queue running cap", &api.Namespace{Name: "r", Meta: map[string]string{"batch_queue_max_running": "-1"}}, `meta batch_queue_max_running "-1" is not allowed: must be a whole number of at least 1`},
		{"queue placing cap", &api.Namespace{Name: "p", Meta: map[string]string{"batch_queue_max_placing": "1.5"}}, `meta batch_queue_max_placing "1.5" is not allowed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Namespaces().Register(tc.ns, nil)
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, http.StatusBadRequest, statusOf(err))
		})
	}
	must.Eq(t, []string{"default"}, namespaceNames(t, c, ""))

	_, err := c.Namespaces().Delete("default", nil)
	must.ErrorContains(t, err, "can not delete default namespace")
	must.Eq(t, http.StatusBadRequest, statusOf(err))

	_, err = c.Namespaces().Delete("missing", nil)
	must.ErrorContains(t, err, `namespace "missing" not found`)
	must.Eq(t, http.StatusNotFound, statusOf(err))
}

func TestNamespaces_HTTP_Jobs(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	// Register, plan and dispatch in a namespace that does not exist.
	job := mockJob("web", 1)
	_, _, err := c.Jobs().Register(job, &api.WriteOptions{Namespace: "prod"})
	must.ErrorContains(t, err, `job "web" is in nonexistent namespace "prod"`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))
	_, _, err = c.Jobs().Plan(mockJob("web", 1), false, &api.WriteOptions{Namespace: "prod"})
	must.ErrorContains(t, err, `nonexistent namespace "prod"`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))
	_, _, err = c.Jobs().Dispatch("web", nil, nil, "", &api.WriteOptions{Namespace: "prod"})
	must.ErrorContains(t, err, `nonexistent namespace "prod"`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))

	// Once it exists the job lands there, not in default.
	_, err = c.Namespaces().Register(&api.Namespace{Name: "prod"}, nil)
	must.NoError(t, err)
	resp, _, err := c.Jobs().Register(mockJob("web", 1), &api.WriteOptions{Namespace: "prod"})
	must.NoError(t, err)
	waitEvalTerminal(t, c, resp.EvalID)
	_, _, err = c.Jobs().Info("web", &api.QueryOptions{Namespace: "prod"})
	must.NoError(t, err)
	_, _, err = c.Jobs().Info("web", nil)
	must.Eq(t, http.StatusNotFound, statusOf(err))

	// A namespace that still has a live job cannot be deleted.
	_, err = c.Namespaces().Delete("prod", nil)
	must.ErrorContains(t, err, `namespace "prod" has non-terminal jobs in regions: [global] (1 jobs: web)`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))

	// Capabilities are enforced on the jobs of the namespace.
	_, err = c.Namespaces().Register(&api.Namespace{Name: "locked", Capabilities: &api.NamespaceCapabilities{DisabledTaskDrivers: []string{"mock_driver"}}}, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(mockJob("m", 1), &api.WriteOptions{Namespace: "locked"})
	must.ErrorContains(t, err, `used task driver "mock_driver" is not allowed in namespace "locked"`)
	must.Eq(t, http.StatusBadRequest, statusOf(err))
}
