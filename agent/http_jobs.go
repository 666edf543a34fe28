package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/apiconv"
	"github.com/nomadq/nomadq/jobspec"
	"github.com/nomadq/nomadq/structs"
)

func (h *httpHandler) jobsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	switch {
	case r.Method == http.MethodGet:
		return h.jobList(w, r)
	case isWrite(r):
		return h.jobRegister(w, r, "")
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) jobList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobListRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.JobListResponse
	if err := h.agent.rpc("Job.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	for _, j := range reply.Jobs {
		// The CLI reads JobSummary.Namespace of every stub.
		if j.JobSummary == nil {
			j.JobSummary = &structs.JobSummary{JobID: j.ID, Namespace: j.Namespace, Summary: map[string]structs.TaskGroupSummary{}}
		}
	}
	jobs := page(&args.QueryOptions, reply.Jobs, func(j *structs.JobListStub) string { return j.ID }, &reply.QueryMeta)
	setMeta(w, &reply.QueryMeta)
	if jobs == nil {
		jobs = []*structs.JobListStub{}
	}
	return jobs, nil
}

// setJobNamespace puts the job in the namespace Nomad picks for it: the
// namespace query parameter (the CLI's -namespace), else the request
// body's, else the job's own, else "default".
func setJobNamespace(r *http.Request, job *api.Job, bodyNamespace string) {
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = bodyNamespace
	}
	if ns == "" && job.Namespace != nil {
		ns = *job.Namespace
	}
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	job.Namespace = &ns
}

// apiJobToStruct checks, canonicalizes and converts a job as the API sends
// it, answering a 400 for what the server would reject: a field nomadq
// does not act on (apiconv.Check) or an invalid value. The warnings are
// Check's, for the response.
func apiJobToStruct(job *api.Job) (*structs.Job, []string, error) {
	if job == nil {
		return nil, nil, codedErr(http.StatusBadRequest, "Job must be specified")
	}
	if job.ID == nil || *job.ID == "" {
		return nil, nil, codedErr(http.StatusBadRequest, "Job ID hasn't been provided")
	}
	// A job without a priority gets the server's job_default_priority,
	// not api.Job.Canonicalize's 50: the server fills in a 0.
	noPriority := job.Priority == nil || *job.Priority == 0
	sj, warnings, err := apiconv.Convert(job)
	if err != nil {
		return nil, nil, codedErr(http.StatusBadRequest, "Job validation failed: %v", err)
	}
	if noPriority {
		sj.Priority = 0
	}
	check := sj.Copy()
	check.Canonicalize()
	if err := check.Validate(); err != nil {
		return nil, nil, codedErr(http.StatusBadRequest, "Job validation failed: %v", err)
	}
	return sj, warnings, nil
}

func (h *httpHandler) jobRegister(w http.ResponseWriter, r *http.Request, pathJobID string) (any, error) {
	var body api.JobRegisterRequest
	raw := teeBody(r)
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, codedErr(http.StatusBadRequest, "Job must be specified")
	}
	if pathJobID != "" && (body.Job.ID == nil || *body.Job.ID != pathJobID) {
		return nil, codedErr(http.StatusBadRequest, "Job ID does not match name")
	}
	if body.EvalPriority != 0 && (body.EvalPriority < structs.JobMinPriority || body.EvalPriority > structs.JobMaxPriority) {
		return nil, codedErr(http.StatusBadRequest, "Eval priority must be between %d and %d, got %d", structs.JobMinPriority, structs.JobMaxPriority, body.EvalPriority)
	}
	setJobNamespace(r, body.Job, body.Namespace)
	job, warnings, err := apiJobToStruct(body.Job)
	if err != nil {
		return nil, err
	}
	if err := applyMaxRunWarnings(raw.Bytes(), job); err != nil {
		return nil, codedErr(http.StatusBadRequest, "Job validation failed: %v", err)
	}
	args := structs.JobRegisterRequest{
		Job:               job,
		EnforceIndex:      body.EnforceIndex,
		JobModifyIndex:    body.JobModifyIndex,
		EvalPriority:      body.EvalPriority,
		PreserveCounts:    body.PreserveCounts,
		PreserveResources: body.PreserveResources,
		Submission:        apiSubmissionToStruct(body.Submission),
	}
	h.parseWrite(r, &args.WriteRequest)
	if job.Namespace != "" {
		args.Namespace = job.Namespace
	}
	var reply structs.JobRegisterResponse
	if err := h.agent.rpc("Job.Register", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	reply.Warnings = strings.TrimSpace(apiconv.Warnings(warnings, job) + "\n" + reply.Warnings)
	setIndex(w, reply.Index)
	return reply, nil
}

func (h *httpHandler) jobSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	jobID, rest, err := pathID(r, "/v1/job/")
	if err != nil {
		return nil, err
	}
	if jobID == "" && rest != "/scale" {
		return nil, codedErr(http.StatusNotFound, "job not found")
	}
	switch rest {
	case "":
		switch {
		case r.Method == http.MethodGet:
			return h.jobGet(w, r, jobID)
		case isWrite(r):
			return h.jobRegister(w, r, jobID)
		case r.Method == http.MethodDelete:
			return h.jobDeregister(w, r, jobID)
		}
		return nil, methodNotAllowed()
	case "/allocations":
		return h.jobAllocations(w, r, jobID)
	case "/evaluations":
		return h.jobEvaluations(w, r, jobID)
	case "/summary":
		return h.jobSummary(w, r, jobID)
	case "/versions":
		return h.jobVersions(w, r, jobID)
	case "/plan":
		return h.jobPlan(w, r, jobID)
	case "/evaluate":
		return h.jobEvaluate(w, r, jobID)
	case "/dispatch":
		return h.jobDispatch(w, r, jobID)
	case "/periodic/force":
		return h.jobPeriodicForce(w, r, jobID)
	case "/deployment":
		return h.jobLatestDeployment(w, r, jobID)
	case "/deployments":
		return h.jobDeployments(w, r, jobID)
	case "/revert":
		return h.jobRevert(w, r, jobID)
	case "/stable":
		return h.jobStable(w, r, jobID)
	case "/scale":
		return h.jobScale(w, r, jobID)
	case "/submission":
		return h.jobSubmission(w, r, jobID)
	}
	return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
}

func (h *httpHandler) jobGet(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID}
	var reply structs.SingleJobResponse
	if err := h.query(w, r, "Job.Get", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Job == nil {
		return nil, codedErr(http.StatusNotFound, "job not found")
	}
	return reply.Job, nil
}

func (h *httpHandler) jobDeregister(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	args := structs.JobDeregisterRequest{JobID: jobID}
	h.parseWrite(r, &args.WriteRequest)
	v := r.URL.Query()
	for _, name := range []string{"purge", "global", "no_shutdown_delay"} {
		if s := v.Get(name); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, codedErr(http.StatusBadRequest, "Failed to parse value of %q (%v) as a bool: %v", name, s, err)
			}
			switch name {
			case "purge":
				args.Purge = b
			case "no_shutdown_delay":
				args.NoShutdownDelay = b
			}
		}
	}
	if s := v.Get("eval_priority"); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Failed to parse value of %q (%v) as an int: %v", "eval_priority", s, err)
		}
		if p != 0 && (p < structs.JobMinPriority || p > structs.JobMaxPriority) {
			return nil, codedErr(http.StatusBadRequest, "Eval priority must be between %d and %d, got %d", structs.JobMinPriority, structs.JobMaxPriority, p)
		}
		args.EvalPriority = p
	}
	var reply structs.JobDeregisterResponse
	if err := h.agent.rpc("Job.Deregister", &args, &reply); err != nil {
		// Nomad answers a stop of a missing job with empty fields.
		if code, _, _ := structs.CodeFromRPCCodedErr(err); code != http.StatusNotFound {
			return nil, rpcError(err)
		}
	}
	setIndex(w, reply.Index)
	return reply, nil
}

func (h *httpHandler) jobAllocations(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.JobSpecificRequest{JobID: jobID}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if s := r.URL.Query().Get("all"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Invalid all: %q is not a bool", s)
		}
		args.All = b
	}
	var reply structs.JobAllocationsResponse
	if err := h.agent.rpc("Job.Allocations", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	if reply.Allocations == nil {
		reply.Allocations = []*structs.AllocListStub{}
	}
	return reply.Allocations, nil
}

func (h *httpHandler) jobEvaluations(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.JobSpecificRequest{JobID: jobID}
	var reply structs.JobEvaluationsResponse
	if err := h.query(w, r, "Job.Evaluations", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Evaluations == nil {
		reply.Evaluations = []*structs.Evaluation{}
	}
	return reply.Evaluations, nil
}

func (h *httpHandler) jobSummary(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.JobSpecificRequest{JobID: jobID}
	var reply structs.JobSummaryResponse
	if err := h.query(w, r, "Job.Summary", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.JobSummary == nil {
		return nil, codedErr(http.StatusNotFound, "job not found")
	}
	return reply.JobSummary, nil
}

func (h *httpHandler) jobVersions(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.JobVersionsRequest{JobID: jobID}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	// Version tags are not implemented, so neither is diffing against a
	// tagged or chosen version.
	for _, name := range []string{"diff_tag", "diff_version"} {
		if v := r.URL.Query().Get(name); v != "" {
			return nil, codedErr(http.StatusBadRequest, "Query parameter %q (%q) is not supported by nomadq: diffs are between consecutive versions", name, v)
		}
	}
	if s := r.URL.Query().Get("diffs"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Failed to parse value of %q (%v) as a bool: %v", "diffs", s, err)
		}
		args.Diffs = b
	}
	var reply structs.JobVersionsResponse
	if err := h.agent.rpc("Job.Versions", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	if len(reply.Versions) == 0 {
		return nil, codedErr(http.StatusNotFound, "job versions not found")
	}
	return reply, nil
}

func (h *httpHandler) jobPlan(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body api.JobPlanRequest
	raw := teeBody(r)
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, codedErr(http.StatusBadRequest, "Job must be specified")
	}
	if body.Job.ID == nil || *body.Job.ID != jobID {
		return nil, codedErr(http.StatusBadRequest, "Job ID does not match")
	}
	setJobNamespace(r, body.Job, body.Namespace)
	job, warnings, err := apiJobToStruct(body.Job)
	if err != nil {
		return nil, err
	}
	if err := applyMaxRunWarnings(raw.Bytes(), job); err != nil {
		return nil, codedErr(http.StatusBadRequest, "Job validation failed: %v", err)
	}
	args := structs.JobPlanRequest{Job: job, Diff: body.Diff, PolicyOverride: body.PolicyOverride}
	h.parseWrite(r, &args.WriteRequest)
	if job.Namespace != "" {
		args.Namespace = job.Namespace
	}
	var reply structs.JobPlanResponse
	if err := h.agent.rpc("Job.Plan", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	// The server adds the job's own advice; Check's comes first.
	reply.Warnings = strings.TrimSpace(apiconv.Warnings(warnings, nil) + "\n" + reply.Warnings)
	setIndex(w, reply.Index)
	return reply, nil
}

func (h *httpHandler) jobEvaluate(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	args := structs.JobEvaluateRequest{JobID: jobID}
	if r.ContentLength != 0 {
		var body api.JobEvaluateRequest
		if err := decodeBody(r, &body); err != nil && !errors.Is(err, errEmptyBody) {
			return nil, err
		}
		if body.JobID != "" && body.JobID != jobID {
			return nil, codedErr(http.StatusBadRequest, "Job ID does not match")
		}
		args.EvalOptions.ForceReschedule = body.EvalOptions.ForceReschedule
	}
	var reply structs.JobRegisterResponse
	if err := h.write(w, r, "Job.Evaluate", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// jobLatestDeployment answers null: nomadq has no deployments.
func (h *httpHandler) jobLatestDeployment(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var q structs.QueryOptions
	if err := h.parseQuery(r, &q); err != nil {
		return nil, err
	}
	setMeta(w, &structs.QueryMeta{Index: 1, KnownLeader: true})
	return rawJSON("null"), nil
}

func (h *httpHandler) jobDeployments(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var q structs.QueryOptions
	if err := h.parseQuery(r, &q); err != nil {
		return nil, err
	}
	setMeta(w, &structs.QueryMeta{Index: 1, KnownLeader: true})
	return []any{}, nil
}

func (h *httpHandler) deploymentsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	return h.jobDeployments(w, r, "")
}

func (h *httpHandler) deploymentSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	return nil, codedErr(http.StatusNotFound, "deployment not found")
}

func (h *httpHandler) jobsParseRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body api.JobsParseRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if strings.TrimSpace(body.JobHCL) == "" {
		return nil, codedErr(http.StatusBadRequest, "Job spec is empty")
	}
	cfg := &jobspec.ParseConfig{Path: "input.hcl", Body: []byte(body.JobHCL), Strict: true}
	if body.Variables != "" {
		f, err := os.CreateTemp("", "nomadq-vars-*.hcl")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		_, err = f.WriteString(body.Variables)
		f.Close()
		if err != nil {
			return nil, err
		}
		cfg.VarFiles = []string{f.Name()}
	}
	res, err := jobspec.ParseResult(cfg)
	if err != nil {
		return nil, codedErr(http.StatusBadRequest, "Failed to parse job: %v", err)
	}
	job := res.Job
	if body.Canonicalize {
		job.Canonicalize()
	}
	if len(res.MaxRunWarnings) == 0 {
		return job, nil
	}
	// The api module's TaskGroup has no MaxRunDurationWarning: the
	// groups' blocks are written into the job's JSON.
	out, err := json.Marshal(job)
	if err == nil {
		out, err = jobspec.InjectMaxRunWarnings(out, job.TaskGroups, res.MaxRunWarnings)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to encode response: %w", err)
	}
	if _, ok := r.URL.Query()["pretty"]; ok {
		var b bytes.Buffer
		if json.Indent(&b, out, "", "    ") == nil {
			out = b.Bytes()
		}
	}
	return rawJSON(out), nil
}

func (h *httpHandler) validateJobRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body api.JobValidateRequest
	raw := teeBody(r)
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, codedErr(http.StatusBadRequest, "Job must be specified")
	}
	resp := &api.JobValidateResponse{DriverConfigValidated: false, ValidationErrors: []string{}}
	var errs structs.MultiError
	warnings, err := apiconv.Check(body.Job)
	errs.Add(err)
	body.Job.Canonicalize()
	sj := apiconv.Job(body.Job)
	sj.Canonicalize()
	errs.Add(applyMaxRunWarnings(raw.Bytes(), sj))
	errs.Add(sj.Validate())
	errs.Add(h.agent.checkJobMaxCount(sj))
	errs.Add(h.agent.checkJobPriority(sj))
	if err := errs.ErrorOrNil(); err != nil {
		resp.Error = err.Error()
		for _, e := range errs.Errors {
			resp.ValidationErrors = append(resp.ValidationErrors, e.Error())
		}
	}
	resp.Warnings = apiconv.Warnings(warnings, sj)
	return resp, nil
}
