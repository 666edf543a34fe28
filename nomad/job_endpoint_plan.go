package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/nomad/jobdiff"
	"github.com/nomadq/nomadq/nomad/jobplan"
	"github.com/nomadq/nomadq/nomad/periodicschedule"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Plan runs the scheduler on a snapshot as if the job were registered and
// reports what it would do (placements, updates, stops, failures) and how
// the job differs from the stored one. Nothing is written.
func (j *Job) Plan(args *structs.JobPlanRequest, reply *structs.JobPlanResponse) error {
	if done, err := j.srv.forward("Job.Plan", args.WriteRequest, args, reply); done {
		return err
	}
	job, err := j.admit(args.Job, args.Namespace)
	if err != nil {
		return err
	}
	if w := job.Warnings(); w != nil {
		reply.Warnings = w.Error()
	}

	snap, err := j.srv.State().Snapshot()
	if err != nil {
		return err
	}
	existing, err := snap.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	index, err := snap.LatestIndex()
	if err != nil {
		return err
	}
	if args.Diff {
		reply.Diff = jobdiff.Diff(existing, job)
	}
	if existing != nil {
		reply.JobModifyIndex = existing.JobModifyIndex
		job.CreateIndex = existing.CreateIndex
		job.Version = existing.Version
		job.JobModifyIndex = existing.JobModifyIndex
		if existing.Stop || existing.SpecChanged(job) {
			job.Version = existing.Version + 1
			job.JobModifyIndex = index + 1
		}
	} else {
		job.CreateIndex, job.JobModifyIndex = index+1, index+1
	}
	job.ModifyIndex = index + 1
	job.SubmitTime = time.Now().UnixNano()

	if job.IsPeriodic() {
		reply.NextPeriodicLaunch = nextLaunch(job.Periodic, time.Now())
		reply.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}}
		reply.Index = index
		return nil
	}
	if job.IsParameterized() {
		reply.Annotations = &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{}}
		reply.Index = index
		return nil
	}

	existingAllocs, err := snap.AllocsByJob(nil, job.Namespace, job.ID, true)
	if err != nil {
		return err
	}
	res, err := jobplan.DryRun(j.srv.logger.Named("plan"), &snapshotState{snap: snap}, job, index, existingAllocs)
	if err != nil {
		return err
	}
	reply.Annotations = res.Annotations
	reply.FailedTGAllocs = res.FailedTGAllocs
	reply.CreatedEvals = res.CreatedEvals
	if reply.Diff != nil {
		for _, tg := range reply.Diff.TaskGroups {
			if u, ok := reply.Annotations.DesiredTGUpdates[tg.Name]; ok {
				tg.Updates = jobplan.UpdatesByName(u)
			}
		}
	}
	reply.Index = index
	return nil
}

// nextLaunch is the next launch of a periodic job after now, or the zero
// time when none of its specs parse.
func nextLaunch(p *structs.PeriodicConfig, now time.Time) time.Time {
	if p == nil || !p.Enabled {
		return time.Time{}
	}
	next, _ := periodicschedule.Next(p, now)
	return next
}

// Versions lists the stored versions of a job, newest first, with the
// diff of each from its predecessor when asked.
func (j *Job) Versions(args *structs.JobVersionsRequest, reply *structs.JobVersionsResponse) error {
	if done, err := j.srv.forward("Job.Versions", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		versions, err := st.JobVersionsByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Versions = versions
		reply.Diffs = nil
		var index uint64
		for i, v := range versions {
			if v.ModifyIndex > index {
				index = v.ModifyIndex
			}
			if args.Diffs && i+1 < len(versions) {
				reply.Diffs = append(reply.Diffs, jobdiff.Diff(versions[i+1], v))
			}
		}
		if index == 0 {
			return maxIndex(st, "job_version")
		}
		return index, nil
	})
}

// Evaluate forces a new evaluation of a job.
func (j *Job) Evaluate(args *structs.JobEvaluateRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Evaluate", args.WriteRequest, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return structs.NewBadRequestf("missing job ID for evaluation")
	}
	ns := namespaceOf(args.Namespace)
	job, err := j.lookup(ns, args.JobID)
	if err != nil {
		return err
	}
	if job.IsPeriodic() {
		return structs.NewBadRequestf("can't evaluate periodic job %q: force a launch with nomad job periodic force", job.ID)
	}
	if job.IsParameterized() {
		return structs.NewBadRequestf("can't evaluate parameterized job %q: dispatch an instance with nomad job dispatch", job.ID)
	}
	now := time.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      ns,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerJobRegister,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
		CreateTime:     now,
		ModifyTime:     now,
	}
	_, index, err := j.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
	if err != nil {
		return err
	}
	reply.EvalID, reply.EvalCreateIndex, reply.JobModifyIndex, reply.Index = eval.ID, index, job.JobModifyIndex, index
	return nil
}
