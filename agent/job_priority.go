package agent

import "github.com/nomadq/nomadq/structs"

// checkJobPriority checks a job's priority against job_max_priority for
// PUT /v1/validate/job, as checkJobMaxCount does job_max_count: an
// agent with a server checks against that server's limit, one without
// against Nomad's default (structs.JobMaxPriority). Register, plan and
// revert are checked by the servers against their own.
func (a *Agent) checkJobPriority(job *structs.Job) error {
	limit := structs.JobMaxPriority
	if a.server != nil {
		limit = a.server.Config().JobMaxPriority
	}
	return job.CheckPriority(limit)
}
