package structs

import (
	"slices"
	"strings"
)

// WorkloadIdentityDefaultName is the name of a task's default identity.
const WorkloadIdentityDefaultName = "default"

// IdentityDefaultAud is the audience of the default identity, Nomad's.
const IdentityDefaultAud = "nomadproject.io"

// WorkloadIdentityTokenFile is the file, in the task's secrets directory,
// that holds the default identity when `identity { file = true }`.
const WorkloadIdentityTokenFile = "nomad_token"

// WorkloadIdentityTokenEnv is the env variable that holds the default
// identity when `identity { env = true }`.
const WorkloadIdentityTokenEnv = "NOMAD_TOKEN"

// WorkloadIdentity is a task's default identity block: where the client
// exposes the JWT the servers signed for the task. It is the part of
// Nomad's block that nomadq honours; the rest is refused at submission
// (see apiconv.CheckWorkloadIdentities).
type WorkloadIdentity struct {
	Name     string
	Audience []string
	Env      bool
	File     bool
}

// Copy returns a deep copy of w; nil stays nil.
func (w *WorkloadIdentity) Copy() *WorkloadIdentity {
	if w == nil {
		return nil
	}
	c := *w
	c.Audience = slices.Clone(w.Audience)
	return &c
}

// WorkloadIdentityClaims are the nomad_* claims of a workload identity
// JWT, under Nomad's claim names. The registered claims (sub, aud, iat,
// nbf, jti) are added by the signer.
type WorkloadIdentityClaims struct {
	Namespace    string `json:"nomad_namespace"`
	JobID        string `json:"nomad_job_id"`
	AllocationID string `json:"nomad_allocation_id"`
	TaskName     string `json:"nomad_task,omitempty"`
}

// WorkloadSubject is the "sub" claim of a task's identity, in Nomad's
// form region:namespace:job:group:task:identity.
func WorkloadSubject(job *Job, group, task, identity string) string {
	return strings.Join([]string{job.Region, job.Namespace, job.IDForWorkloadIdentity(), group, task, identity}, ":")
}

// IDForWorkloadIdentity is the job ID identities carry: a dispatched or
// periodic child names its parent, as in Nomad, so that a policy written
// for the parent covers every child.
func (j *Job) IDForWorkloadIdentity() string {
	if j.ParentID != "" {
		return j.ParentID
	}
	return j.ID
}
