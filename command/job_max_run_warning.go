package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/jobspec"
	"github.com/nomadq/nomadq/structs"
)

// The api module's TaskGroup has no MaxRunDurationWarning, so a job file's
// max_run_duration_warning blocks travel beside the api.Job, by group
// name, and are written into each JSON body the commands send or print.
// The agent reads them from the request body.

// maxRunWarnings are a job's max_run_duration_warning blocks by group
// name.
type maxRunWarnings = map[string]*structs.MaxRunDurationWarning

// jobJSON marshals v, a value holding job, with the groups' warnings
// written in.
func jobJSON(v any, job *api.Job, warnings maxRunWarnings) ([]byte, error) {
	buf, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jobspec.InjectMaxRunWarnings(buf, job.TaskGroups, warnings)
}

// registerJob registers job as api.Jobs.RegisterOpts does, with the
// groups' warnings in the request body.
func registerJob(client *api.Client, job *api.Job, opts *api.RegisterOptions, warnings maxRunWarnings) (*api.JobRegisterResponse, error) {
	if len(warnings) == 0 {
		resp, _, err := client.Jobs().RegisterOpts(job, opts, nil)
		return resp, err
	}
	req := &api.JobRegisterRequest{Job: job}
	if opts != nil {
		if opts.EnforceIndex {
			req.EnforceIndex = true
			req.JobModifyIndex = opts.ModifyIndex
		}
		req.PolicyOverride = opts.PolicyOverride
		req.PreserveCounts = opts.PreserveCounts
		req.PreserveResources = opts.PreserveResources
		req.EvalPriority = opts.EvalPriority
		req.Submission = opts.Submission
	}
	body, err := jobJSON(req, job, warnings)
	if err != nil {
		return nil, err
	}
	var resp api.JobRegisterResponse
	if _, err := client.Raw().Write("/v1/jobs", bytes.NewReader(body), &resp, nil); err != nil {
		return nil, err
	}
	return &resp, nil
}

// planRequestBody is the body of a plan request for job.
func planRequestBody(job *api.Job, diff bool, warnings maxRunWarnings) (any, error) {
	req := &api.JobPlanRequest{Job: job, Diff: diff}
	if len(warnings) == 0 {
		return req, nil
	}
	body, err := jobJSON(req, job, warnings)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(body), nil
}

// planPath is the plan endpoint of job.
func planPath(job *api.Job) string {
	return "/v1/job/" + url.PathEscape(*job.ID) + "/plan"
}

// apiWarning is a group's MaxRunDurationWarning in the API's JSON.
type apiWarning struct {
	Before *int64
	Signal *string
}

// apiGroupWithWarning is an api.TaskGroup that may carry a
// MaxRunDurationWarning, so that a JSON job holding one decodes with
// unknown keys refused.
type apiGroupWithWarning struct {
	api.TaskGroup
	MaxRunDurationWarning *apiWarning
}

// apiJobWithWarnings is an api.Job whose groups may carry a
// MaxRunDurationWarning.
type apiJobWithWarnings struct {
	api.Job
	TaskGroups []*apiGroupWithWarning
}

// split returns the api job and the groups' warnings.
func (j *apiJobWithWarnings) split() (*api.Job, maxRunWarnings, error) {
	job := j.Job
	job.TaskGroups = nil
	var warnings maxRunWarnings
	for i, g := range j.TaskGroups {
		if g == nil {
			job.TaskGroups = append(job.TaskGroups, nil)
			continue
		}
		tg := g.TaskGroup
		job.TaskGroups = append(job.TaskGroups, &tg)
		w := g.MaxRunDurationWarning
		if w == nil {
			continue
		}
		if tg.Name == nil || *tg.Name == "" {
			return nil, nil, fmt.Errorf("TaskGroups[%d]: a group with a MaxRunDurationWarning must have a Name", i)
		}
		out := &structs.MaxRunDurationWarning{}
		if w.Before != nil {
			out.Before = time.Duration(*w.Before)
		}
		if w.Signal != nil {
			out.Signal = *w.Signal
		}
		if warnings == nil {
			warnings = maxRunWarnings{}
		}
		warnings[*tg.Name] = out
	}
	return &job, warnings, nil
}

// storedMaxRunWarnings reads the groups' warnings of a registered job
// from the agent (version < 0: the current version), which api.Job drops.
func storedMaxRunWarnings(client *api.Client, id string, version int64, q *api.QueryOptions) (maxRunWarnings, error) {
	type storedJob struct {
		Version    *uint64
		TaskGroups []*apiGroupWithWarning
	}
	var jobs []storedJob
	if version < 0 {
		var j storedJob
		if _, err := client.Raw().Query("/v1/job/"+url.PathEscape(id), &j, q); err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	} else {
		var resp struct{ Versions []storedJob }
		if _, err := client.Raw().Query("/v1/job/"+url.PathEscape(id)+"/versions", &resp, q); err != nil {
			return nil, err
		}
		for _, j := range resp.Versions {
			if j.Version != nil && int64(*j.Version) == version {
				jobs = append(jobs, j)
			}
		}
	}
	var warnings maxRunWarnings
	for _, j := range jobs {
		_, w, err := (&apiJobWithWarnings{TaskGroups: j.TaskGroups}).split()
		if err != nil {
			return nil, err
		}
		warnings = w
	}
	return warnings, nil
}

// indentedJobJSON is {"Job": job} as job inspect and job run -output
// print it, with the groups' warnings written in.
func indentedJobJSON(job *api.Job, warnings maxRunWarnings) (string, error) {
	buf, err := jobJSON(struct{ Job *api.Job }{job}, job, warnings)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf, "", "    "); err != nil {
		return "", err
	}
	return out.String(), nil
}
