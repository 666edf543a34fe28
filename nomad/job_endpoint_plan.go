package nomad

import (
	"errors"
	"fmt"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/nomad/jobdiff"
	"github.com/nomadq/nomadq/nomad/periodicschedule"
	"github.com/nomadq/nomadq/scheduler"
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

	now := time.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      job.Namespace,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerJobRegister,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		Status:         structs.EvalStatusPending,
		AnnotatePlan:   true,
		CreateTime:     now,
		ModifyTime:     now,
		CreateIndex:    index + 1,
		ModifyIndex:    index + 1,
	}
	planner := &dryRunPlanner{}
	st := &planState{snapshotState: snapshotState{snap: snap}, job: job}
	sched, err := scheduler.NewScheduler(job.Type, scheduler.Config{Logger: j.srv.logger.Named("plan"), Now: time.Now, Rand: scheduler.EvalRand(eval.ID)}, st, planner)
	if err != nil {
		return err
	}
	if err := sched.Process(eval); err != nil {
		return fmt.Errorf("plan job %q: %w", job.ID, err)
	}
	existingAllocs, err := snap.AllocsByJob(nil, job.Namespace, job.ID, true)
	if err != nil {
		return err
	}
	reply.Annotations = annotate(job, planner.plan, existingAllocs)
	if planner.eval != nil && len(planner.eval.FailedTGAllocs) > 0 {
		reply.FailedTGAllocs = planner.eval.FailedTGAllocs
	}
	reply.CreatedEvals = planner.created
	if reply.Diff != nil {
		for _, tg := range reply.Diff.TaskGroups {
			if u, ok := reply.Annotations.DesiredTGUpdates[tg.Name]; ok {
				tg.Updates = desiredUpdatesMap(u)
			}
		}
	}
	reply.Index = index
	return nil
}

// planState is the snapshot with the planned job in place of the stored
// one.
type planState struct {
	snapshotState
	job *structs.Job
}

func (s *planState) JobByID(ns, id string) (*structs.Job, error) {
	if ns == s.job.Namespace && id == s.job.ID {
		return s.job, nil
	}
	return s.snapshotState.JobByID(ns, id)
}

// dryRunPlanner records what the scheduler would do and commits nothing.
type dryRunPlanner struct {
	plan    *structs.Plan
	eval    *structs.Evaluation
	created []*structs.Evaluation
}

func (p *dryRunPlanner) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, scheduler.State, error) {
	p.plan = plan
	return &structs.PlanResult{NodeUpdate: plan.NodeUpdate, NodeAllocation: plan.NodeAllocation}, nil, nil
}

func (p *dryRunPlanner) UpdateEval(e *structs.Evaluation) error { p.eval = e; return nil }

func (p *dryRunPlanner) CreateEval(e *structs.Evaluation) error {
	p.created = append(p.created, e)
	return nil
}

func (p *dryRunPlanner) ReblockEval(e *structs.Evaluation) error { return nil }

// annotate counts, per task group, what the plan does.
func annotate(job *structs.Job, plan *structs.Plan, existing []*structs.Allocation) *structs.PlanAnnotations {
	ann := &structs.PlanAnnotations{DesiredTGUpdates: make(map[string]*structs.DesiredUpdates, len(job.TaskGroups))}
	for _, tg := range job.TaskGroups {
		ann.DesiredTGUpdates[tg.Name] = &structs.DesiredUpdates{}
	}
	get := func(tg string) *structs.DesiredUpdates {
		u, ok := ann.DesiredTGUpdates[tg]
		if !ok {
			u = &structs.DesiredUpdates{}
			ann.DesiredTGUpdates[tg] = u
		}
		return u
	}
	live := map[string]*structs.Allocation{}
	for _, a := range existing {
		if !a.TerminalStatus() {
			live[a.ID] = a
		}
	}
	touched := map[string]bool{}
	destructive := map[string]int{}
	if plan != nil {
		for _, allocs := range plan.NodeUpdate {
			for _, a := range allocs {
				touched[a.ID] = true
				u := get(a.TaskGroup)
				if strings.Contains(a.DesiredDescription, "updat") {
					u.DestructiveUpdate++
					destructive[a.TaskGroup]++
				} else {
					u.Stop++
				}
			}
		}
		for _, allocs := range plan.NodeAllocation {
			for _, a := range allocs {
				u := get(a.TaskGroup)
				if _, ok := live[a.ID]; ok {
					touched[a.ID] = true
					u.InPlaceUpdate++
					continue
				}
				if destructive[a.TaskGroup] > 0 {
					destructive[a.TaskGroup]--
					continue
				}
				if a.PreviousAllocation != "" {
					u.RescheduleNow++
				}
				u.Place++
			}
		}
	}
	for id, a := range live {
		if !touched[id] {
			get(a.TaskGroup).Ignore++
		}
	}
	return ann
}

func desiredUpdatesMap(u *structs.DesiredUpdates) map[string]uint64 {
	m := map[string]uint64{}
	add := func(k string, v uint64) {
		if v > 0 {
			m[k] = v
		}
	}
	add("ignore", u.Ignore)
	add("create", u.Place)
	add("destroy", u.Stop)
	add("in-place update", u.InPlaceUpdate)
	add("create/destroy update", u.DestructiveUpdate)
	add("migrate", u.Migrate)
	add("canary", u.Canary)
	return m
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
		return errors.New("missing job ID for evaluation")
	}
	ns := namespaceOf(args.Namespace)
	job, err := j.lookup(ns, args.JobID)
	if err != nil {
		return err
	}
	if job.IsPeriodic() {
		return errors.New("can't evaluate periodic job")
	}
	if job.IsParameterized() {
		return errors.New("can't evaluate parameterized job")
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
