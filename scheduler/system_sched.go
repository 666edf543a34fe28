package scheduler

import (
	"fmt"
	"sort"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/structs"
)

// systemScheduler schedules system and sysbatch jobs: one allocation of
// each group on every ready node that passes the group's checks.
type systemScheduler struct {
	logger   hclog.Logger
	cfg      Config
	state    State
	planner  Planner
	sysbatch bool
	outcome
}

func newSystemScheduler(logger hclog.Logger, cfg Config, state State, planner Planner, sysbatch bool) *systemScheduler {
	return &systemScheduler{logger: logger, cfg: cfg, state: state, planner: planner, sysbatch: sysbatch,
		outcome: outcome{planner: planner, now: cfg.Now, maxAttempts: maxPlanAttempts}}
}

// Process reconciles the job against every node and submits plans until
// one commits fully or the attempts run out.
func (s *systemScheduler) Process(eval *structs.Evaluation) error {
	s.eval = eval
	s.blocked = nil
	return s.run(s.attempt)
}

func (s *systemScheduler) attempt() (done, progress bool, err error) {
	snap, err := readSnapshot(s.state, s.eval)
	if err != nil {
		return false, false, err
	}
	job, allocs, nodes, nodeByID := snap.job, snap.allocs, snap.nodes, snap.nodeByID
	s.job, s.snapshotIndex = job, snap.index
	plan := s.newPlan(snap)
	ctx := newEvalContext(s.state, plan, s.eval.JobID, nodeByID)
	ctx.nodeLimit = snap.nodeLimit
	s.resetCounts(job)

	stop := func(a *structs.Allocation, desc, clientStatus string) {
		plan.AppendStoppedAlloc(a, desc, clientStatus)
		ctx.stop(a)
	}

	if job == nil || job.Stop {
		for _, a := range allocs {
			if !a.TerminalStatus() {
				stop(a, descJobStopped, "")
			}
		}
	} else {
		s.reconcile(ctx, plan, job, allocs, nodes, nodeByID, snap.ready, snap.algorithm, stop)
	}
	if ctx.err != nil {
		return false, false, fmt.Errorf("read state: %w", ctx.err)
	}
	if plan.IsNoOp() {
		return true, false, nil
	}
	done, progress, newState, err := s.submit(plan)
	if newState != nil {
		s.state = newState
	}
	return done, progress, err
}

// reconcile decides, group by group and node by node, what to stop,
// update and place.
func (s *systemScheduler) reconcile(ctx *evalContext, plan *structs.Plan, job *structs.Job, allocs []*structs.Allocation,
	nodes []*structs.Node, nodeByID map[string]*structs.Node, ready map[string]map[string]int, algorithm string, stop func(*structs.Allocation, string, string)) {
	existing := make(map[nodeGroup][]*structs.Allocation)
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		if job.LookupTaskGroup(a.TaskGroup) == nil {
			if !a.ClientTerminalStatus() {
				stop(a, descGroupRemoved, "")
			}
			continue
		}
		k := nodeGroup{a.NodeID, a.TaskGroup}
		existing[k] = append(existing[k], a)
	}
	// Allocations on nodes that left the cluster are lost.
	for k, as := range existing {
		if nodeByID[k.node] == nil {
			for _, a := range as {
				if !a.ClientTerminalStatus() {
					stop(a, descLost, structs.AllocClientStatusLost)
				}
			}
		}
	}

	stacks := make(map[string]*groupStack)
	type placement struct {
		tg   *structs.TaskGroup
		node *structs.Node
	}
	var places []placement
	for _, tg := range job.TaskGroups {
		st := newGroupStack(ctx, job, tg, &nodeOrder{nodes: nodes}, ready, algorithm)
		stacks[tg.Name] = st
		all := st.feasible.all()
		feasible := make(map[string]bool, len(all))
		for _, n := range all {
			feasible[n.ID] = true
		}
		for _, n := range nodes {
			as := existing[nodeGroup{n.ID, tg.Name}]
			sort.SliceStable(as, func(i, j int) bool { return as[i].CreateIndex < as[j].CreateIndex })
			var live []*structs.Allocation
			complete := false
			for _, a := range as {
				switch {
				case !a.ClientTerminalStatus():
					live = append(live, a)
				case a.ClientStatus == structs.AllocClientStatusComplete:
					complete = true
				}
			}
			switch n.Status {
			case structs.NodeStatusDown:
				for _, a := range live {
					stop(a, descLost, structs.AllocClientStatusLost)
				}
				continue
			case structs.NodeStatusReady:
			default:
				continue // initializing or disconnected: wait and see
			}
			if len(live) > 0 {
				for _, a := range live[1:] {
					stop(a, descNotNeeded, "")
				}
				a := live[0]
				switch {
				case a.DesiredTransition.ShouldMigrate() && (n.Draining() || n.SchedulingEligibility != structs.NodeSchedulingEligible):
					// Drained off the node, which is ineligible now:
					// nothing replaces it here.
					stop(a, descMigrating, "")
				case !st.feasibleOn(n):
					stop(a, descInfeasible, "")
				case a.DesiredTransition.ShouldMigrate():
					// A stopped system alloc runs again on its node.
					stop(a, descMigrating, "")
					places = append(places, placement{tg, n})
				case !jobChanged(a, job):
				case !needsDestructiveUpdate(a.Job, job, tg.Name):
					u := *a
					u.Job = job
					u.EvalID = s.eval.ID
					plan.AppendAlloc(&u)
				default:
					stop(a, DescUpdating, "")
					places = append(places, placement{tg, n})
				}
				continue
			}
			if !feasible[n.ID] {
				continue
			}
			if complete && s.sysbatch {
				continue // sysbatch runs once per node
			}
			places = append(places, placement{tg, n})
		}
	}

	for _, p := range places {
		st := stacks[p.tg.Name]
		m := &structs.AllocMetric{NodePool: st.stats.metric.NodePool, NodesInPool: st.stats.metric.NodesInPool, NodesEvaluated: 1}
		ctx.metric = m
		u := ctx.usageOf(p.node)
		total := u.used
		o, dim := makeOffer(p.node, u, p.tg, st.ask)
		if o == nil {
			recordExhausted(m, p.node, dim)
			s.queued[p.tg.Name]++
			if f := s.failed[p.tg.Name]; f != nil {
				f.CoalescedFailures++
				f.NodesExhausted++
				f.DimensionExhausted[dim]++
				continue
			}
			s.recordFailure(p.tg.Name, st.failureMetric(m))
			continue
		}
		total.Add(o.ask)
		score := fullness(u.capacity, total)
		if algorithm == structs.SchedulerAlgorithmSpread {
			score = 1 - score
		}
		m.ScoreMetaData = []*structs.NodeScoreMeta{{NodeID: p.node.ID, NormScore: score, Scores: structs.NodeScores{{Name: scoreBinPack, Score: score}}}}
		plan.AppendAlloc(s.newAlloc(job, p.tg, p.node, m, o))
		ctx.place(p.node, p.tg.Name, st.ask, o)
	}
	s.classElig, s.escaped = eligibility(stacks, s.failed)
}

func (s *systemScheduler) newAlloc(job *structs.Job, tg *structs.TaskGroup, n *structs.Node, m *structs.AllocMetric, o *offer) *structs.Allocation {
	ar, total, tasks := allocatedResources(tg, memoryOversubscription(s.state), o)
	ns := job.Namespace
	if ns == "" {
		ns = s.eval.Namespace
	}
	return &structs.Allocation{
		ID:                 structs.GenerateUUID(),
		Namespace:          ns,
		EvalID:             s.eval.ID,
		Name:               structs.AllocName(job.ID, tg.Name, 0),
		NodeID:             n.ID,
		NodeName:           n.Name,
		JobID:              job.ID,
		Job:                job,
		TaskGroup:          tg.Name,
		Resources:          total,
		TaskResources:      tasks,
		AllocatedResources: ar,
		Metrics:            m,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	}
}
