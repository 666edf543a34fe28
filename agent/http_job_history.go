package agent

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// apiSubmissionToStruct converts the source sent with a registration.
func apiSubmissionToStruct(s *api.JobSubmission) *structs.JobSubmission {
	if s == nil {
		return nil
	}
	return &structs.JobSubmission{Source: s.Source, Format: s.Format, VariableFlags: s.VariableFlags, Variables: s.Variables}
}

// matchBodyJobID checks that a body names the job of the URL.
func matchBodyJobID(bodyID, pathID string) error {
	if bodyID == "" {
		return codedErr(http.StatusBadRequest, "JobID must be specified")
	}
	if bodyID != pathID {
		return codedErr(http.StatusBadRequest, "Job ID does not match: the URL names %q, the body %q", pathID, bodyID)
	}
	return nil
}

// jobRevert answers PUT /v1/job/:id/revert.
func (h *httpHandler) jobRevert(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body api.JobRevertRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := matchBodyJobID(body.JobID, jobID); err != nil {
		return nil, err
	}
	args := structs.JobRevertRequest{JobID: jobID, JobVersion: body.JobVersion, EnforcePriorVersion: body.EnforcePriorVersion}
	var reply structs.JobRegisterResponse
	if err := h.write(w, r, "Job.Revert", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// jobStable answers PUT /v1/job/:id/stable.
func (h *httpHandler) jobStable(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body api.JobStabilityRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := matchBodyJobID(body.JobID, jobID); err != nil {
		return nil, err
	}
	args := structs.JobStabilityRequest{JobID: jobID, JobVersion: body.JobVersion, Stable: body.Stable}
	var reply structs.JobStabilityResponse
	if err := h.write(w, r, "Job.Stable", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// jobScale answers GET (status) and PUT/POST (scale) /v1/job/:id/scale.
func (h *httpHandler) jobScale(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	switch {
	case r.Method == http.MethodGet:
		if jobID == "" {
			return nil, codedErr(http.StatusNotFound, "job not found")
		}
		args := structs.JobScaleStatusRequest{JobID: jobID}
		var reply structs.JobScaleStatusResponse
		if err := h.query(w, r, "Job.ScaleStatus", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		if reply.JobScaleStatus == nil {
			return nil, codedErr(http.StatusNotFound, "job not found")
		}
		return reply.JobScaleStatus, nil
	case isWrite(r):
		var body api.ScalingRequest
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if t := body.Target[structs.ScalingTargetJob]; t != "" && t != jobID {
			return nil, codedErr(http.StatusBadRequest, "job ID in payload did not match URL")
		}
		args := structs.JobScaleRequest{
			JobID:          jobID,
			Target:         body.Target,
			Count:          body.Count,
			Message:        body.Message,
			Error:          body.Error,
			Meta:           body.Meta,
			PolicyOverride: body.PolicyOverride,
			JobModifyIndex: body.JobModifyIndex,
		}
		var reply structs.JobRegisterResponse
		if err := h.write(w, r, "Job.Scale", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
			return nil, err
		}
		return reply, nil
	}
	return nil, methodNotAllowed()
}

// jobSubmission answers GET /v1/job/:id/submission?version=N.
func (h *httpHandler) jobSubmission(w http.ResponseWriter, r *http.Request, jobID string) (any, error) {
	s := r.URL.Query().Get("version")
	version, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, codedErr(http.StatusBadRequest, "Unable to parse job submission version parameter: %q is not an unsigned integer", s)
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.JobSubmissionRequest{JobID: jobID, Version: version}
	var reply structs.JobSubmissionResponse
	if err := h.query(w, r, "Job.GetJobSubmission", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Submission == nil {
		return nil, codedErr(http.StatusNotFound, "job source not found")
	}
	sub := reply.Submission
	return api.JobSubmission{Source: sub.Source, Format: sub.Format, VariableFlags: sub.VariableFlags, Variables: sub.Variables}, nil
}

// jobsStatusesRequest answers GET and POST /v1/jobs/statuses. A body
// names the jobs wanted; with one, a default namespace means all, since
// each named job carries its own.
func (h *httpHandler) jobsStatusesRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return nil, methodNotAllowed()
	}
	args := structs.JobStatusesRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	if s := r.URL.Query().Get("include_children"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Failed to parse value of %q (%v) as a bool: %v", "include_children", s, err)
		}
		args.IncludeChildren = b
	}
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		var body api.JobStatusesRequest
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if len(body.Jobs) == 0 {
			return nil, codedErr(http.StatusBadRequest, "no jobs in request: Jobs must name at least one job")
		}
		if args.Namespace == structs.DefaultNamespace {
			args.Namespace = "*"
		}
		for _, j := range body.Jobs {
			args.Jobs = append(args.Jobs, structs.NamespacedID{ID: j.ID, Namespace: j.Namespace})
		}
		args.IncludeChildren = args.IncludeChildren || body.IncludeChildren
	}
	// Filter and pages apply to the listing, in its order.
	q := args.QueryOptions
	args.Filter, args.PerPage, args.NextToken = "", 0, ""
	var reply structs.JobStatusesResponse
	if err := h.agent.rpc("Job.Statuses", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	key := func(j structs.JobStatusesJob) string {
		if q.Reverse {
			return fmt.Sprintf("%020d", j.ModifyIndex)
		}
		return fmt.Sprintf("%020d", math.MaxUint64-j.ModifyIndex)
	}
	jobs, err := filterAndPage(&q, reply.Jobs, key, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if jobs == nil {
		jobs = []structs.JobStatusesJob{}
	}
	return jobs, nil
}
