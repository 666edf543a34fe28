package agent

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// doRaw sends a request to the agent and returns the response with its
// body read into memory.
func doRaw(t *testing.T, a *Agent, method, path, body string) *http.Response {
	t.Helper()
	return doRawAs(t, a, method, path, "", body)
}

// doRawAs is doRaw with an ACL token ("" for none).
func doRawAs(t *testing.T, a *Agent, method, path, token, body string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.HTTPAddr()+path, r)
	must.NoError(t, err)
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return string(b)
}

func TestAgentOps_JoinRegionsForceLeave(t *testing.T) {
	a1 := NewTestAgent(t, func(c *config.Config) { c.Region = "regionA"; c.Client.Enabled = false })
	a2 := NewTestAgent(t, func(c *config.Config) { c.Region = "regionB"; c.Client.Enabled = false })
	c1, c2 := apiClient(t, a1), apiClient(t, a2)

	n, err := c2.Agent().Join("nope")
	must.Error(t, err)
	must.Zero(t, n)

	n, err = c2.Agent().Join(a1.SerfAddr())
	must.NoError(t, err)
	must.One(t, n)

	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		regions, err := c1.Regions().List()
		if err != nil {
			return err
		}
		if !slices.Equal(regions, []string{"regionA", "regionB"}) {
			return fmt.Errorf("regions %v", regions)
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))

	// A stopped member is pruned from the member list at once.
	before, err := c1.Agent().Members()
	must.NoError(t, err)
	must.Len(t, 2, before.Members)
	must.NoError(t, a2.Shutdown())
	must.NoError(t, c1.Agent().ForceLeaveWithOptions(a2.config.Name+".regionB", api.ForceLeaveOpts{Prune: true}))
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		after, err := c1.Agent().Members()
		if err != nil {
			return err
		}
		if len(after.Members) != 1 {
			return fmt.Errorf("%d members", len(after.Members))
		}
		return nil
	}), wait.Timeout(15*time.Second), wait.Gap(100*time.Millisecond)))

	// Force-leave of an unknown member is no error, as in Nomad.
	must.NoError(t, c1.Agent().ForceLeave("nope"))

	cases := []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/v1/agent/join?address=x", http.StatusMethodNotAllowed},
		{http.MethodPut, "/v1/agent/join", http.StatusBadRequest},
		{http.MethodPut, "/v1/agent/force-leave", http.StatusBadRequest},
		{http.MethodPut, "/v1/agent/force-leave?node=x&prune=maybe", http.StatusBadRequest},
		{http.MethodPut, "/v1/regions", http.StatusMethodNotAllowed},
	}
	for _, tc := range cases {
		must.Eq(t, tc.code, doRaw(t, a1, tc.method, tc.path, "").StatusCode, must.Sprintf("%s %s", tc.method, tc.path))
	}
}

func TestAgentOps_SchedulerWorkers(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	ag := c.Agent()

	// The workers are a leader loop: they start just after the agent
	// is ready, so wait for them to report started.
	var info *api.AgentSchedulerWorkersInfo
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		var err error
		if info, err = ag.GetSchedulerWorkersInfo(nil); err != nil {
			return err
		}
		for _, w := range info.Schedulers {
			if w.Status != "Started" {
				return fmt.Errorf("worker %s is %s", w.ID, w.Status)
			}
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	must.Eq(t, a.config.Name+".global", info.ServerID)
	must.Len(t, 2, info.Schedulers)
	for _, w := range info.Schedulers {
		must.SliceContainsAll(t, []string{"batch", "system", "sysbatch", "service", "_core"}, w.EnabledSchedulers)
		_, err := time.Parse(time.RFC3339Nano, w.Started)
		must.NoError(t, err)
	}
	cfg, err := ag.GetSchedulerWorkerConfig(nil)
	must.NoError(t, err)
	must.Eq(t, 2, cfg.NumSchedulers)

	// No workers: a registered job's eval waits in the broker.
	got, err := ag.SetSchedulerWorkerConfig(api.SchedulerWorkerPoolArgs{NumSchedulers: 0, EnabledSchedulers: []string{"_core", "batch"}}, nil)
	must.NoError(t, err)
	must.Eq(t, 0, got.NumSchedulers)
	info, err = ag.GetSchedulerWorkersInfo(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, info.Schedulers)
	resp, _, err := c.Jobs().Register(mockJob("paused-workers", 1), nil)
	must.NoError(t, err)
	eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, "pending", eval.Status)

	// One batch worker back: the eval is processed.
	got, err = ag.SetSchedulerWorkerConfig(api.SchedulerWorkerPoolArgs{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "batch"}}, nil)
	must.NoError(t, err)
	must.Eq(t, 1, got.NumSchedulers)
	must.Eq(t, []string{"_core", "batch"}, got.EnabledSchedulers)
	must.Eq(t, "complete", waitEvalTerminal(t, c, resp.EvalID).Status)

	for _, bad := range []api.SchedulerWorkerPoolArgs{
		{NumSchedulers: -1, EnabledSchedulers: []string{"_core"}},
		{NumSchedulers: 1, EnabledSchedulers: []string{"batch"}},
		{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "nope"}},
		{NumSchedulers: 100000, EnabledSchedulers: []string{"_core"}},
	} {
		_, err := ag.SetSchedulerWorkerConfig(bad, nil)
		must.ErrorContains(t, err, "400 (Invalid request)", must.Sprintf("%+v", bad))
	}
	cfg, err = ag.GetSchedulerWorkerConfig(nil)
	must.NoError(t, err)
	must.Eq(t, 1, cfg.NumSchedulers, must.Sprint("refused changes leave the pool alone"))
}

func TestAgentOps_ServersOnDevAgent(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	servers, err := c.Agent().Servers()
	must.NoError(t, err)
	must.SliceContains(t, servers, a.RPCAddr())
	// The dev client reaches its own server in process: nothing to set.
	err = c.Agent().SetServers([]string{"127.0.0.1:4647"})
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "in process")

	srvOnly := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	must.Eq(t, http.StatusNotImplemented, doRaw(t, srvOnly, http.MethodGet, "/v1/agent/servers", "").StatusCode)
}

func TestAgentOps_ServersOnClientAgent(t *testing.T) {
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	cl := NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.DataDir = t.TempDir()
		c.Client.Servers = []string{srv.RPCAddr()}
	})
	c := apiClient(t, cl)
	servers, err := c.Agent().Servers()
	must.NoError(t, err)
	must.Eq(t, []string{srv.RPCAddr()}, servers)

	must.NoError(t, c.Agent().SetServers([]string{srv.RPCAddr(), "127.0.0.1"}))
	servers, err = c.Agent().Servers()
	must.NoError(t, err)
	must.Eq(t, slices.Sorted(slices.Values([]string{"127.0.0.1:4647", srv.RPCAddr()})), servers)

	for _, bad := range []string{"127.0.0.1:notaport", "127.0.0.1:0", ":4647"} {
		err := c.Agent().SetServers([]string{bad})
		must.ErrorContains(t, err, "400", must.Sprint(bad))
	}
	must.Eq(t, http.StatusBadRequest, doRaw(t, cl, http.MethodPut, "/v1/agent/servers", "").StatusCode)
	servers, err = c.Agent().Servers()
	must.NoError(t, err)
	must.Len(t, 2, servers, must.Sprint("a refused list leaves the old one"))
}

func TestAgentOps_Host(t *testing.T) {
	t.Setenv("MY_API_TOKEN", "hush")
	t.Setenv("NOMAD_TOKEN", "hush")
	t.Setenv("PLAIN_SETTING", "visible")

	off := NewTestAgent(t, func(c *config.Config) { c.EnableDebug = false })
	_, err := apiClient(t, off).Agent().Host("", "", nil)
	must.ErrorContains(t, err, "403")

	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	// With a target naming this agent the data is wrapped with its ID.
	resp, err := c.Agent().Host(a.config.Name+".global", "", nil)
	must.NoError(t, err)
	must.Eq(t, a.config.Name+".global", resp.AgentID)
	hd := resp.HostData
	must.NotNil(t, hd)
	must.StrContains(t, hd.OS, "Linux")
	must.SliceNotEmpty(t, hd.Network)
	must.MapNotEmpty(t, hd.Disk)
	must.Eq(t, "<redacted>", hd.Environment["MY_API_TOKEN"])
	must.Eq(t, "<redacted>", hd.Environment["NOMAD_TOKEN"])
	must.Eq(t, "visible", hd.Environment["PLAIN_SETTING"])

	resp, err = c.Agent().Host("", a.client.NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, a.client.NodeID(), resp.AgentID)

	_, err = c.Agent().Host("unknown.global", "", nil)
	must.ErrorContains(t, err, "500 (unknown Nomad server unknown.global)")
	_, err = c.Agent().Host("x", "y", nil)
	must.ErrorContains(t, err, "400")

	// Without a target Nomad answers the host data itself.
	body := readBody(t, doRaw(t, a, http.MethodGet, "/v1/agent/host", ""))
	must.StrContains(t, body, `"Environment"`)
	must.StrNotContains(t, body, "hush")
}

func TestRedactedEnvironment(t *testing.T) {
	cases := []struct {
		kv, key, want string
	}{
		{"PATH=/bin", "PATH", "/bin"},
		{"VAULT_TOKEN=s.1", "VAULT_TOKEN", redacted},
		{"AWS_ACCESS_KEY_ID=AK", "AWS_ACCESS_KEY_ID", redacted},
		{"my_secret_thing=x", "my_secret_thing", redacted},
		{"GitHubToken=x", "GitHubToken", redacted},
		{"EQUALS=a=b", "EQUALS", "a=b"},
	}
	for _, tc := range cases {
		must.Eq(t, tc.want, redactedEnvironment([]string{tc.kv})[tc.key], must.Sprint(tc.kv))
	}
}
