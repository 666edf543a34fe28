package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// The job history routes, driven through the official client as the api
// module's own tests drive them.
func TestJobHistory_Routes(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	jobs := c.Jobs()

	t.Run("revert enforces the prior version and makes a new eval", func(t *testing.T) {
		job := mockJob("revert", 0)
		first, _, err := jobs.Register(job, nil)
		must.NoError(t, err)
		job.Meta = map[string]string{"foo": "new"}
		_, _, err = jobs.Register(job, nil)
		must.NoError(t, err)

		_, _, err = jobs.Revert("revert", 0, new(uint64(10)), nil, "", "")
		must.ErrorContains(t, err, "enforcing version 10")
		_, _, err = jobs.Revert("revert", 1, nil, nil, "", "")
		must.ErrorContains(t, err, `400 (job "revert" is already at version 1)`)
		_, _, err = jobs.Revert("revert", 7, nil, nil, "", "")
		must.ErrorContains(t, err, "404")

		resp, wm, err := jobs.Revert("revert", 0, new(uint64(1)), nil, "", "")
		must.NoError(t, err)
		must.UUIDv4(t, resp.EvalID)
		must.Positive(t, resp.EvalCreateIndex)
		must.Greater(t, first.JobModifyIndex, resp.JobModifyIndex)
		must.Positive(t, wm.LastIndex)

		got, _, err := jobs.Info("revert", nil)
		must.NoError(t, err)
		must.Eq(t, uint64(2), *got.Version)
		must.MapEmpty(t, got.Meta)
	})

	t.Run("versions with diffs name the changed field", func(t *testing.T) {
		versions, diffs, _, err := jobs.Versions("revert", true, nil)
		must.NoError(t, err)
		must.Len(t, 3, versions)
		must.Len(t, 2, diffs)
		must.Eq(t, "Edited", diffs[0].Type)
		must.SliceNotEmpty(t, diffs[0].Objects)
		must.Eq(t, "Meta", diffs[0].Objects[0].Name)
		_, _, _, err = jobs.Versions("nope", false, nil)
		must.ErrorContains(t, err, "not found")
		_, _, _, err = jobs.VersionsOpts("revert", &api.VersionsOptions{Diffs: true, DiffVersion: new(uint64(0))}, nil)
		must.ErrorContains(t, err, `"diff_version" ("0") is not supported`)
	})

	t.Run("stable marks a version", func(t *testing.T) {
		_, wm, err := jobs.Stable("revert", 2, true, nil)
		must.NoError(t, err)
		must.Positive(t, wm.LastIndex)
		got, _, err := jobs.Info("revert", nil)
		must.NoError(t, err)
		must.True(t, *got.Stable)
		versions, _, _, err := jobs.Versions("revert", false, nil)
		must.NoError(t, err)
		must.True(t, *versions[0].Stable)
		must.False(t, *versions[1].Stable)

		_, _, err = jobs.Stable("revert", 9, true, nil)
		must.ErrorContains(t, err, "at version 9 not found")
	})

	t.Run("submission is kept per version and purged with the job", func(t *testing.T) {
		job := mockJob("sub", 0)
		_, _, err := jobs.Submission("sub", 0, nil)
		must.ErrorContains(t, err, "job source not found")

		for i, src := range []string{"source v0", "source v1"} {
			job.Meta = map[string]string{"v": src}
			flags := map[string]string{"X": "x\ny"}
			if i == 1 {
				flags = nil
			}
			_, _, err := jobs.RegisterOpts(job, &api.RegisterOptions{Submission: &api.JobSubmission{
				Source: src, Format: "hcl2", VariableFlags: flags, Variables: "vars " + src,
			}}, nil)
			must.NoError(t, err)
		}
		sub, _, err := jobs.Submission("sub", 0, nil)
		must.NoError(t, err)
		must.Eq(t, &api.JobSubmission{Source: "source v0", Format: "hcl2", VariableFlags: map[string]string{"X": "x\ny"}, Variables: "vars source v0"}, sub)
		sub, _, err = jobs.Submission("sub", 1, nil)
		must.NoError(t, err)
		must.Eq(t, "source v1", sub.Source)
		must.MapEmpty(t, sub.VariableFlags)

		// A revert carries the source of the version it brings back.
		_, _, err = jobs.Revert("sub", 0, nil, nil, "", "")
		must.NoError(t, err)
		sub, _, err = jobs.Submission("sub", 2, nil)
		must.NoError(t, err)
		must.Eq(t, "source v0", sub.Source)

		_, _, err = jobs.Deregister("sub", true, nil)
		must.NoError(t, err)
		for _, v := range []int{0, 1, 2} {
			_, _, err = jobs.Submission("sub", v, nil)
			must.ErrorContains(t, err, "job source not found")
		}
	})

	t.Run("submission needs a version number", func(t *testing.T) {
		resp, err := http.Get(a.HTTPAddr() + "/v1/job/revert/submission?version=x")
		must.NoError(t, err)
		resp.Body.Close()
		must.Eq(t, http.StatusBadRequest, resp.StatusCode)
	})
}

// The scale endpoint changes a group's count with a new eval and keeps
// a history of scaling events; without a count it only records one.
func TestJobHistory_Scale(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	jobs := c.Jobs()

	id := "job-id/with\\troublesome:characters\n?&字"
	_, _, err := jobs.Scale(id, "g", new(2), "too early", false, nil, nil)
	must.ErrorContains(t, err, "not found")
	_, _, err = jobs.ScaleStatus(id, nil)
	must.ErrorContains(t, err, "not found")

	job := mockJob(id, 0)
	reg, _, err := jobs.Register(job, nil)
	must.NoError(t, err)

	invalid := []struct {
		jobID, group string
		count        int
		want         string
	}{
		{"", "", 1, "400"},
		{"i-dont-exist", "", 1, "400"},
		{"", "i-dont-exist", 1, "400"},
		{"i-dont-exist", "me-neither", 1, "404"},
		{id, "incorrect-group-name", 2, "does not exist"},
		{id, "g", -1, "can't be negative"},
	}
	for _, tc := range invalid {
		_, _, err := jobs.Scale(tc.jobID, tc.group, &tc.count, "reason", false, nil, nil)
		must.ErrorContains(t, err, tc.want, must.Sprintf("scale %q/%q", tc.jobID, tc.group))
	}

	status, qm, err := jobs.ScaleStatus(id, nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.Eq(t, 0, status.TaskGroups["g"].Desired)

	// Only an event: no count, no eval, the job is unchanged.
	noop, _, err := jobs.Scale(id, "g", nil, "just saying", false, map[string]any{"meta": "data"}, nil)
	must.NoError(t, err)
	must.Eq(t, "", noop.EvalID)
	must.Eq(t, reg.JobModifyIndex, noop.JobModifyIndex)
	_, _, err = jobs.Scale(id, "g", nil, "it broke", true, nil, nil)
	must.NoError(t, err)

	scaled, _, err := jobs.Scale(id, "g", new(1), "need more", false, map[string]any{"meta": "data"}, nil)
	must.NoError(t, err)
	must.UUIDv4(t, scaled.EvalID)
	must.Positive(t, scaled.EvalCreateIndex)
	must.Greater(t, reg.JobModifyIndex, scaled.JobModifyIndex)
	eval := waitEvalTerminal(t, c, scaled.EvalID)
	must.Eq(t, "job-scaling", eval.TriggeredBy)

	got, _, err := jobs.Info(id, nil)
	must.NoError(t, err)
	must.Eq(t, 1, *got.TaskGroups[0].Count)

	status, _, err = jobs.ScaleStatus(id, nil)
	must.NoError(t, err)
	must.Eq(t, 1, status.TaskGroups["g"].Desired)
	events := status.TaskGroups["g"].Events
	must.Len(t, 3, events)
	must.Eq(t, "need more", events[0].Message)
	must.Eq(t, scaled.EvalID, *events[0].EvalID)
	must.Eq(t, int64(0), events[0].PreviousCount)
	must.Eq(t, int64(1), *events[0].Count)
	must.MapEq(t, map[string]any{"meta": "data"}, events[0].Meta)
	must.Positive(t, events[0].Time)
	must.True(t, events[1].Error)
	must.Nil(t, events[1].EvalID)
	must.Eq(t, "just saying", events[2].Message)
}

// DELETE /v1/evaluations is refused while the broker runs, as in Nomad;
// with the broker paused through the scheduler configuration it deletes
// by ID or filter, and the count endpoint follows.
func TestEvaluations_CountAndDelete(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	reg, _, err := c.Jobs().Register(mockJob("evals", 0), nil)
	must.NoError(t, err)
	waitEvalTerminal(t, c, reg.EvalID)
	_, _, err = c.Jobs().Deregister("evals", false, nil)
	must.NoError(t, err)

	count, qm, err := c.Evaluations().Count(nil)
	must.NoError(t, err)
	must.Eq(t, 2, count.Count)
	must.Positive(t, qm.LastIndex)
	count, _, err = c.Evaluations().Count(&api.QueryOptions{Filter: `TriggeredBy == "job-register"`})
	must.NoError(t, err)
	must.Eq(t, 1, count.Count)
	_, _, err = c.Evaluations().Count(&api.QueryOptions{Filter: `TriggeredBy ==`})
	must.ErrorContains(t, err, "400")

	_, err = c.Evaluations().Delete([]string{reg.EvalID}, nil)
	must.ErrorContains(t, err, "eval broker is enabled")

	cfg, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	cfg.SchedulerConfig.PauseEvalBroker = true
	upd, _, err := c.Operator().SchedulerCASConfiguration(cfg.SchedulerConfig, nil)
	must.NoError(t, err)
	must.True(t, upd.Updated)

	_, err = c.Evaluations().Delete([]string{"8E231CF4-CA48-43FF-B694-5801E69E22FA"}, nil)
	must.ErrorContains(t, err, "eval not found")
	_, err = c.Evaluations().Delete(nil, nil)
	must.ErrorContains(t, err, "either ID or filter")

	_, err = c.Evaluations().Delete([]string{reg.EvalID}, nil)
	must.NoError(t, err)
	_, _, err = c.Evaluations().Info(reg.EvalID, nil)
	must.ErrorContains(t, err, "404")

	resp, _, err := c.Evaluations().DeleteOpts(&api.EvalDeleteRequest{Filter: `TriggeredBy == "job-deregister"`}, nil)
	must.NoError(t, err)
	must.Eq(t, 1, resp.Count)
	count, _, err = c.Evaluations().Count(nil)
	must.NoError(t, err)
	must.Eq(t, 0, count.Count)

	// A job registered while paused waits; resuming schedules it.
	reg, _, err = c.Jobs().Register(mockJob("after", 0), nil)
	must.NoError(t, err)
	e, _, err := c.Evaluations().Info(reg.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, "pending", e.Status)
	cfg, _, err = c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	cfg.SchedulerConfig.PauseEvalBroker = false
	_, _, err = c.Operator().SchedulerSetConfiguration(cfg.SchedulerConfig, nil)
	must.NoError(t, err)
	must.Eq(t, "complete", waitEvalTerminal(t, c, reg.EvalID).Status)
}

// /v1/jobs/statuses lists jobs newest change first, narrows to the jobs a
// POST names, and reconcile rewrites summaries through Raft.
func TestJobs_StatusesAndReconcile(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	for _, id := range []string{"one", "two"} {
		reg, _, err := c.Jobs().Register(mockJob(id, 1), nil)
		must.NoError(t, err)
		waitEvalTerminal(t, c, reg.EvalID)
	}

	type statusJob struct {
		ID, Namespace, Type string
		GroupCountSum       int
		Allocs              []struct{ ID, Group, ClientStatus string }
	}
	get := func(method, query string, body any) (int, []statusJob) {
		var buf bytes.Buffer
		if body != nil {
			must.NoError(t, json.NewEncoder(&buf).Encode(body))
		}
		req, err := http.NewRequest(method, a.HTTPAddr()+"/v1/jobs/statuses"+query, &buf)
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		var out []statusJob
		if resp.StatusCode == http.StatusOK {
			must.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		}
		return resp.StatusCode, out
	}

	code, all := get(http.MethodGet, "", nil)
	must.Eq(t, http.StatusOK, code)
	must.Len(t, 2, all)
	must.Eq(t, "two", all[0].ID) // most recently changed first
	must.Eq(t, 1, all[0].GroupCountSum)
	must.Len(t, 1, all[0].Allocs)
	must.Eq(t, "g", all[0].Allocs[0].Group)

	_, rev := get(http.MethodGet, "?reverse=true&per_page=1", nil)
	must.Len(t, 1, rev)
	must.Eq(t, "one", rev[0].ID)

	code, one := get(http.MethodPost, "", api.JobStatusesRequest{Jobs: []api.NamespacedID{{ID: "one"}}})
	must.Eq(t, http.StatusOK, code)
	must.Len(t, 1, one)
	must.Eq(t, "one", one[0].ID)
	must.Eq(t, "default", one[0].Namespace)

	code, _ = get(http.MethodPost, "", api.JobStatusesRequest{})
	must.Eq(t, http.StatusBadRequest, code)
	code, _ = get(http.MethodPut, "", nil)
	must.Eq(t, http.StatusMethodNotAllowed, code)
	code, _ = get(http.MethodGet, "?include_children=maybe", nil)
	must.Eq(t, http.StatusBadRequest, code)

	before, _, err := c.Jobs().Summary("one", nil)
	must.NoError(t, err)
	must.NoError(t, c.System().ReconcileSummaries())
	after, _, err := c.Jobs().Summary("one", nil)
	must.NoError(t, err)
	must.Eq(t, before.Summary, after.Summary)

	resp, err := http.Get(a.HTTPAddr() + "/v1/system/reconcile/summaries?" + url.Values{}.Encode())
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
