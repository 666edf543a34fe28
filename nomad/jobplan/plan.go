package jobplan

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/scheduler"
	"github.com/nomadq/nomadq/structs"
)

// State is what a dry run reads: the scheduler's view of a snapshot,
// with the shared node list and ready counts the scheduler uses when a
// state offers them.
type State interface {
	scheduler.State
	scheduler.NodeSetState
	scheduler.ReadyCountState
}

// Result is what the scheduler would do with a job.
type Result struct {
	// Annotations count, per task group, the placements, updates, stops
	// and allocs left alone.
	Annotations *structs.PlanAnnotations
	// FailedTGAllocs are the groups that would not be placed in full.
	FailedTGAllocs map[string]*structs.AllocMetric
	// CreatedEvals are the evals the scheduler would create (blocked or
	// follow-up).
	CreatedEvals []*structs.Evaluation
}

// DryRun runs the scheduler for job, as registered at the entry after
// index, against st with job in place of the stored version, and reports
// what it would do to the job's allocs (existing). Nothing is written.
func DryRun(logger hclog.Logger, st State, job *structs.Job, index uint64, existing []*structs.Allocation) (*Result, error) {
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
	sched, err := scheduler.NewScheduler(job.Type, scheduler.Config{Logger: logger, Now: time.Now, Rand: scheduler.EvalRand(eval.ID)},
		&planState{State: st, job: job}, planner)
	if err != nil {
		return nil, err
	}
	if err := sched.Process(eval); err != nil {
		return nil, fmt.Errorf("plan job %q: %w", job.ID, err)
	}
	res := &Result{Annotations: annotate(job, planner.plan, existing), CreatedEvals: planner.created}
	if planner.eval != nil && len(planner.eval.FailedTGAllocs) > 0 {
		res.FailedTGAllocs = planner.eval.FailedTGAllocs
	}
	return res, nil
}

// planState is the snapshot with the planned job in place of the stored
// one.
type planState struct {
	State
	job *structs.Job
}

func (s *planState) JobByID(ns, id string) (*structs.Job, error) {
	if ns == s.job.Namespace && id == s.job.ID {
		return s.job, nil
	}
	return s.State.JobByID(ns, id)
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

// annotate counts, per task group, what the plan does to the job's
// allocs (existing).
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
				if a.DesiredDescription == scheduler.DescUpdating {
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

// UpdatesByName is a group's desired updates keyed as Nomad's plan diff
// names them ("create", "in-place update", ...), leaving out zeros.
func UpdatesByName(u *structs.DesiredUpdates) map[string]uint64 {
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
