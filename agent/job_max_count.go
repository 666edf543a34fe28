package agent

import "github.com/nomadq/nomadq/structs"

// checkJobMaxCount checks a job's counts against job_max_count for PUT
// /v1/validate/job, which validates in the agent without asking a
// server. An agent with a server checks against that server's limit. An
// agent without one cannot know the limit its servers were given, so it
// checks Nomad's default (structs.JobDefaultMaxCount); register, plan
// and scale are still checked by the servers against their own.
func (a *Agent) checkJobMaxCount(job *structs.Job) error {
	limit := structs.JobDefaultMaxCount
	if a.server != nil {
		limit = a.server.Config().JobMaxCount
	}
	return job.CheckMaxCount(limit)
}
