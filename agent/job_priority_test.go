package agent

import (
	"io"
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// server.job_max_priority and server.job_default_priority: Nomad's
// defaults, other values in HCL and JSON, 0 for the defaults; a value
// out of Nomad's bounds stops the agent naming the key.
func TestJobPriority_Config(t *testing.T) {
	cases := []struct {
		name, file, body string
		max, def         int
	}{
		{"default", "a.hcl", `name = "x"`, 100, 50},
		{"hcl", "a.hcl", "server {\n job_max_priority = 500\n job_default_priority = 200\n}\n", 500, 200},
		{"json", "a.json", `{"server": {"job_max_priority": 32766, "job_default_priority": 32765}}`, 32766, 32765},
		{"zero is the default", "a.hcl", "server {\n job_max_priority = 0\n job_default_priority = 0\n}\n", 100, 50},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Dev()
			var warnings []string
			must.NoError(t, config.Parse(cfg, tc.file, []byte(tc.body), func(w string) { warnings = append(warnings, w) }))
			must.SliceEmpty(t, warnings, must.Sprint("the priority keys are implemented, not ignored"))
			must.NoError(t, cfg.Validate())
			maxPriority, defaultPriority := cfg.Server.JobPriorities()
			must.Eq(t, tc.max, maxPriority)
			must.Eq(t, tc.def, defaultPriority)
		})
	}

	for _, tc := range []struct{ body, want string }{
		{"job_max_priority = 99", "server.job_max_priority 99 is not allowed: must be between 100 and 32766 (0 means 100)"},
		{"job_max_priority = 32767", "server.job_max_priority 32767 is not allowed: must be between 100 and 32766 (0 means 100)"},
		{"job_max_priority = -1", "server.job_max_priority -1 is not allowed: must be between 100 and 32766 (0 means 100)"},
		{"job_default_priority = 49", "server.job_default_priority 49 is not allowed: must be between 50 and 99, below job_max_priority 100 (0 means 50)"},
		{"job_default_priority = 100", "server.job_default_priority 100 is not allowed: must be between 50 and 99, below job_max_priority 100 (0 means 50)"},
		{"job_max_priority = 200\n job_default_priority = 200", "server.job_default_priority 200 is not allowed: must be between 50 and 199, below job_max_priority 200 (0 means 50)"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			cfg := config.Dev()
			must.NoError(t, config.Parse(cfg, "a.hcl", []byte("server {\n "+tc.body+"\n}\n"), nil))
			must.ErrorContains(t, cfg.Validate(), tc.want)
			_, err := New(cfg, io.Discard)
			must.ErrorContains(t, err, tc.want)
		})
	}
	must.ErrorContains(t, config.Parse(config.Dev(), "a.hcl", []byte("server {\n job_max_priority = \"high\"\n}\n"), nil),
		"server.job_max_priority must be a whole number, got string")
}

// An agent whose config raises job_max_priority and job_default_priority
// registers a job without a priority at the default and one up to the
// maximum; above it register, plan and validate answer a 400 naming the
// priority and the limit. /v1/agent/self shows both keys.
func TestJobPriority_ConfigHonoured(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		must.NoError(t, config.Parse(c, "priority.hcl", []byte("server {\n job_max_priority = 200\n job_default_priority = 70\n}\n"), nil))
	})
	c := apiClient(t, a)
	parameterized := func(id string, priority *int) *api.Job {
		j := mockJob(id, 1)
		j.Priority = priority
		j.ParameterizedJob = &api.ParameterizedJobConfig{}
		return j
	}

	// Absent (as the CLI sends a job file without one) or 0.
	for id, p := range map[string]*int{"absent": nil, "zero": new(0)} {
		_, _, err := c.Jobs().Register(parameterized(id, p), nil)
		must.NoError(t, err)
		job, _, err := c.Jobs().Info(id, nil)
		must.NoError(t, err)
		must.Eq(t, 70, *job.Priority, must.Sprint(id))
	}

	// 200 is allowed: the agent does not refuse it before the server.
	high := parameterized("high", new(200))
	must.SliceEmpty(t, validationErrors(t, a, high))
	_, _, err := c.Jobs().Plan(high, false, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(high, nil)
	must.NoError(t, err)
	job, _, err := c.Jobs().Info("high", nil)
	must.NoError(t, err)
	must.Eq(t, 200, *job.Priority)

	const refusal = "job priority must be between [1, 200], got 201 (the server's job_max_priority is 200)"
	over := parameterized("over", new(201))
	must.Eq(t, []string{refusal}, validationErrors(t, a, over))
	for path, req := range map[string]any{
		"/v1/jobs":          api.JobRegisterRequest{Job: over},
		"/v1/job/over/plan": api.JobPlanRequest{Job: over},
	} {
		code, ctype, body := httpPut(t, a.HTTPAddr()+path, req)
		must.Eq(t, http.StatusBadRequest, code, must.Sprint(path))
		must.StrHasPrefix(t, "text/plain", ctype)
		must.Eq(t, refusal, body, must.Sprint(path))
	}
	_, _, err = c.Jobs().Info("over", nil)
	must.ErrorContains(t, err, "404")

	self, err := c.Agent().Self()
	must.NoError(t, err)
	server, _ := self.Config["Server"].(map[string]any)
	must.Eq[any](t, float64(200), server["JobMaxPriority"])
	must.Eq[any](t, float64(70), server["JobDefaultPriority"])
}

// With Nomad's defaults a job above 100 is refused by the server, not
// only by the agent's validation.
func TestJobPriority_DefaultLimit(t *testing.T) {
	a := NewTestAgent(t, nil)
	j := mockJob("over", 1)
	j.Priority = new(101)
	const refusal = "job priority must be between [1, 100], got 101 (the server's job_max_priority is 100)"
	must.Eq(t, []string{refusal}, validationErrors(t, a, j))
	code, _, body := httpPut(t, a.HTTPAddr()+"/v1/jobs", api.JobRegisterRequest{Job: j})
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, refusal, body)
}
