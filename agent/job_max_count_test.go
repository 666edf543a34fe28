package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/structs"
)

// validationErrors asks PUT /v1/validate/job about job.
func validationErrors(t *testing.T, a *Agent, job *api.Job) []string {
	t.Helper()
	code, _, body := httpPut(t, a.HTTPAddr()+"/v1/validate/job", api.JobValidateRequest{Job: job})
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	var v api.JobValidateResponse
	must.NoError(t, json.Unmarshal([]byte(body), &v))
	return v.ValidationErrors
}

// A count in the billions is refused at once by validate, plan, register
// and scale with a plain-text 400 naming the count and job_max_count,
// and nothing is stored: such a job used to grow the agent by hundreds
// of MB a second and hang plan.
func TestJobMaxCount_HTTP(t *testing.T) {
	a := NewTestAgent(t, nil)
	base := a.HTTPAddr()
	const refusal = `task group "g" count 2147483648 is more than the server's job_max_count 50000`
	huge := mockJob("huge", 2147483648)

	// Validate first: it answers from the agent, so without the limit
	// the test fails here before anything reaches the scheduler.
	must.Eq(t, []string{refusal}, validationErrors(t, a, huge))

	start := time.Now()
	code, ctype, body := httpPut(t, base+"/v1/job/huge/plan", api.JobPlanRequest{Job: huge})
	must.Eq(t, http.StatusBadRequest, code)
	must.StrHasPrefix(t, "text/plain", ctype)
	must.Eq(t, refusal, body)
	must.Less(t, 5*time.Second, time.Since(start))

	code, ctype, body = httpPut(t, base+"/v1/jobs", api.JobRegisterRequest{Job: huge})
	must.Eq(t, http.StatusBadRequest, code)
	must.StrHasPrefix(t, "text/plain", ctype)
	must.Eq(t, refusal, body)

	two := mockJob("two", 30000)
	more := api.NewTaskGroup("h", 30000)
	more.Tasks = two.TaskGroups[0].Tasks
	two.AddTaskGroup(more)
	code, _, body = httpPut(t, base+"/v1/jobs", api.JobRegisterRequest{Job: two})
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, `total count of the job's task groups 60000 is more than the server's job_max_count 50000`, body)

	code, _, body = httpPut(t, base+"/v1/jobs", api.JobRegisterRequest{Job: mockJob("negative", -1)})
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, `Job validation failed: Task group "g": count -1 is not allowed: must be zero or more`, body)

	many := mockJob("many", 1)
	for i := range structs.MaxTaskGroupsPerJob {
		tg := api.NewTaskGroup("g"+strconv.Itoa(i+1), 1)
		tg.Tasks = many.TaskGroups[0].Tasks
		many.AddTaskGroup(tg)
	}
	code, _, body = httpPut(t, base+"/v1/jobs", api.JobRegisterRequest{Job: many})
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, fmt.Sprintf("Job validation failed: Job: %d task groups are not allowed: at most %d", structs.MaxTaskGroupsPerJob+1, structs.MaxTaskGroupsPerJob), body)

	c := apiClient(t, a)
	_, _, err := c.Jobs().Register(mockJob("scaled", 0), nil)
	must.NoError(t, err)
	for count, want := range map[int64]string{
		1<<31 - 1: `task group "g" count 2147483647 is more than the server's job_max_count 50000`,
		1 << 31:   `new scaling count is too large for TaskGroup.Count (int): 2147483648`,
	} {
		code, ctype, body := httpPut(t, base+"/v1/job/scaled/scale", api.ScalingRequest{Count: &count, Target: map[string]string{"Group": "g"}})
		must.Eq(t, http.StatusBadRequest, code)
		must.StrHasPrefix(t, "text/plain", ctype)
		must.Eq(t, want, body)
	}
	job, _, err := c.Jobs().Info("scaled", nil)
	must.NoError(t, err)
	must.Eq(t, 0, *job.TaskGroups[0].Count)
	must.Eq(t, uint64(0), *job.Version)
	status, _, err := c.Jobs().ScaleStatus("scaled", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, status.TaskGroups["g"].Events)

	jobs, _, err := c.Jobs().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.Eq(t, "scaled", jobs[0].ID)
}

// server.job_max_count: Nomad's default, any other value, 0 for no
// limit; a negative value stops the agent naming the key.
func TestJobMaxCount_Config(t *testing.T) {
	must.Eq(t, structs.JobDefaultMaxCount, nomad.DefaultConfig().JobMaxCount)
	cases := []struct {
		name, file, body string
		want             int
	}{
		{"default", "a.hcl", `name = "x"`, 50000},
		{"hcl", "a.hcl", "server {\n job_max_count = 10\n}\n", 10},
		{"json", "a.json", `{"server": {"job_max_count": 10}}`, 10},
		{"zero is no limit", "a.hcl", "server {\n job_max_count = 0\n}\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Dev()
			var warnings []string
			must.NoError(t, config.Parse(cfg, tc.file, []byte(tc.body), func(w string) { warnings = append(warnings, w) }))
			must.SliceEmpty(t, warnings, must.Sprint("job_max_count is implemented, not ignored"))
			must.Eq(t, tc.want, cfg.Server.JobMaxCount)
			must.NoError(t, cfg.Validate())
		})
	}

	cfg := config.Dev()
	must.NoError(t, config.Parse(cfg, "a.hcl", []byte("server {\n job_max_count = -1\n}\n"), nil))
	const refusal = "server.job_max_count -1 is not allowed: must be 0 (no limit) or more"
	must.ErrorContains(t, cfg.Validate(), refusal)
	_, err := New(cfg, io.Discard)
	must.ErrorContains(t, err, refusal)
	must.ErrorContains(t, config.Parse(config.Dev(), "a.hcl", []byte("server {\n job_max_count = \"many\"\n}\n"), nil),
		"server.job_max_count must be a whole number, got string")
}

// The server enforces the job_max_count its config file sets, and PUT
// /v1/validate/job checks against the same value.
func TestJobMaxCount_ConfigHonoured(t *testing.T) {
	// Parameterized jobs get no evaluation at registration, so a count
	// the limit lets through places nothing.
	parameterized := func(id string, count int) *api.Job {
		j := mockJob(id, count)
		j.ParameterizedJob = &api.ParameterizedJobConfig{}
		return j
	}
	withLimit := func(t *testing.T, hcl string) *Agent {
		return NewTestAgent(t, func(c *config.Config) {
			must.NoError(t, config.Parse(c, "limit.hcl", []byte(hcl), nil))
		})
	}

	t.Run("10 refuses 11", func(t *testing.T) {
		a := withLimit(t, "server {\n job_max_count = 10\n}\n")
		c := apiClient(t, a)
		_, _, err := c.Jobs().Register(parameterized("ten", 10), nil)
		must.NoError(t, err)

		const refusal = `task group "g" count 11 is more than the server's job_max_count 10`
		eleven := parameterized("eleven", 11)
		must.Eq(t, []string{refusal}, validationErrors(t, a, eleven))
		for path, req := range map[string]any{
			"/v1/jobs":            api.JobRegisterRequest{Job: eleven},
			"/v1/job/eleven/plan": api.JobPlanRequest{Job: eleven},
		} {
			code, _, body := httpPut(t, a.HTTPAddr()+path, req)
			must.Eq(t, http.StatusBadRequest, code, must.Sprint(path))
			must.Eq(t, refusal, body, must.Sprint(path))
		}
	})

	t.Run("0 is no limit", func(t *testing.T) {
		a := withLimit(t, "server {\n job_max_count = 0\n}\n")
		c := apiClient(t, a)
		big := parameterized("big", 60000)
		must.SliceEmpty(t, validationErrors(t, a, big))
		_, _, err := c.Jobs().Plan(big, false, nil)
		must.NoError(t, err)
		_, _, err = c.Jobs().Register(big, nil)
		must.NoError(t, err)
		stored, _, err := c.Jobs().Info("big", nil)
		must.NoError(t, err)
		must.Eq(t, 60000, *stored.TaskGroups[0].Count)
	})
}
