package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// The mistakes a new user makes on day one are 4xx answers whose words
// say what was wrong, never a 500, and the agent logs none of them at
// ERROR: that level is for the server's own faults.
func TestHTTP_UserMistakesAre4xx(t *testing.T) {
	log := &logBuffer{}
	a, err := StartLocal(func(c *config.Config) {
		c.LogLevel = "DEBUG"
		c.ACL.Enabled = true
	}, io.MultiWriter(log, testLogOutput()), 60*time.Second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
	c := apiClient(t, a)
	root, _, err := c.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	c.SetSecretID(root.SecretID)

	job := api.NewBatchJob("app", "app", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.AddTask(shTask("t", "true"))
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	cron := api.NewBatchJob("cron", "cron", "global", 50)
	cron.Datacenters = []string{"*"}
	cron.Periodic = &api.PeriodicConfig{Spec: new("*/5 * * * *"), SpecType: new("cron")}
	cron.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(cron, nil)
	must.NoError(t, err)
	elsewhere := *job
	elsewhere.Namespace = new("nope")
	elsewhereBody, err := json.Marshal(map[string]any{"Job": &elsewhere})
	must.NoError(t, err)

	do := func(method, path string, body []byte) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, a.HTTPAddr()+path, bytes.NewReader(body))
		must.NoError(t, err)
		req.Header.Set("X-Nomad-Token", root.SecretID)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(out)
	}
	cases := []struct {
		name, method, path string
		body               []byte
		code               int
		want               *regexp.Regexp
	}{
		{"revert to the current version", "PUT", "/v1/job/app/revert", []byte(`{"JobID":"app","JobVersion":0}`),
			400, regexp.MustCompile(`^job "app" is already at version 0$`)},
		{"second ACL bootstrap", "PUT", "/v1/acl/bootstrap", nil,
			400, regexp.MustCompile(`^ACL bootstrap already done \(reset index: \d+\)$`)},
		{"register in a namespace that does not exist", "PUT", "/v1/jobs", elsewhereBody,
			400, regexp.MustCompile(`^job "app" is in nonexistent namespace "nope"$`)},
		{"plan in a namespace that does not exist", "PUT", "/v1/job/app/plan?namespace=nope", elsewhereBody,
			400, regexp.MustCompile(`^job "app" is in nonexistent namespace "nope"$`)},
		{"evaluate a periodic job", "PUT", "/v1/job/cron/evaluate", nil,
			400, regexp.MustCompile(`^can't evaluate periodic job "cron": force a launch with nomad job periodic force$`)},
		{"remove a Raft peer that is not one", "DELETE", "/v1/operator/raft/peer?id=nope", nil,
			404, regexp.MustCompile(`^id "nope" was not found in the Raft configuration$`)},
		{"malformed alloc ID", "GET", "/v1/allocation/xyz", nil, 404, regexp.MustCompile(`^alloc not found$`)},
		{"unknown alloc ID", "GET", "/v1/allocation/5e4c2a1b-0000-0000-0000-000000000000", nil, 404, regexp.MustCompile(`^alloc not found$`)},
		{"alloc listing by a prefix that is not hex", "GET", "/v1/allocations?prefix=zz-not-hex", nil, 200, regexp.MustCompile(`^\[\]$`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(tc.method, tc.path, tc.body)
			must.Eq(t, tc.code, code, must.Sprint(body))
			must.RegexMatch(t, tc.want, strings.TrimSpace(body))
		})
	}
	must.StrContains(t, log.String(), `[DEBUG] agent.http: request refused: method=PUT path=/v1/job/app/revert error="job \"app\" is already at version 0" code=400`)
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "[ERROR]") && strings.Contains(line, "agent.http") {
			t.Errorf("a user's mistake was logged as a server fault: %s", line)
		}
	}
}
