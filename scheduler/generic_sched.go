package scheduler

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/structs"
)

const (
	// maxPlanAttempts bounds how often one evaluation re-plans after a
	// partial commit without any progress. Nomad allows 5 for service
	// and 2 for batch; batch placement is this project's main load, so
	// batch gets the same 5 to ride out plan conflicts.
	maxPlanAttempts = 5

	// followupWindow groups failed allocations whose reschedule times lie
	// this close into one follow-up evaluation.
	followupWindow = 5 * time.Second
)

// genericScheduler schedules service and batch jobs: a counted number of
// allocations per group, placed by bin-packing and kept alive by
// rescheduling.
type genericScheduler struct {
	logger  hclog.Logger
	cfg     Config
	state   State
	planner Planner

	outcome

	// followups maps a failed allocation to the follow-up eval created
	// for it, so retries of a partial plan do not create another.
	followups map[string]string
}

func newGenericScheduler(logger hclog.Logger, cfg Config, state State, planner Planner) *genericScheduler {
	return &genericScheduler{logger: logger, cfg: cfg, state: state, planner: planner,
		outcome: outcome{planner: planner, now: cfg.Now, maxAttempts: maxPlanAttempts}}
}

// Process reconciles the evaluation's job and submits plans until one
// commits fully or the attempts run out, then records the outcome on the
// evaluation.
func (s *genericScheduler) Process(eval *structs.Evaluation) error {
	s.eval = eval
	s.followups = make(map[string]string)
	s.blocked = nil
	return s.run(s.attempt)
}

// attempt builds and submits one plan. done is false when the plan was
// only partly committed and the scheduler must retry.
func (s *genericScheduler) attempt() (done, progress bool, err error) {
	now := s.cfg.Now()
	snap, err := readSnapshot(s.state, s.eval)
	if err != nil {
		return false, false, err
	}
	job, allocs, nodeByID := snap.job, snap.allocs, snap.nodeByID
	s.job, s.snapshotIndex = job, snap.index
	ordered := newNodeOrder(snap.nodes, s.cfg)
	plan := s.newPlan(snap)
	ctx := newEvalContext(s.state, plan, s.eval.JobID, nodeByID)
	ctx.nodeLimit = snap.nodeLimit
	stacks := make(map[string]*groupStack)
	stackFor := func(tg *structs.TaskGroup) *groupStack {
		st, ok := stacks[tg.Name]
		if !ok {
			st = newGroupStack(ctx, job, tg, ordered, snap.ready, snap.algorithm)
			stacks[tg.Name] = st
		}
		return st
	}

	rec := &reconciler{
		job:    job,
		evalID: s.eval.ID,
		now:    now,
		allocs: allocs,
		nodes:  nodeByID,
		inplaceOK: func(a *structs.Allocation, tg *structs.TaskGroup) bool {
			return stackFor(tg).feasibleOn(nodeByID[a.NodeID])
		},
	}
	res := rec.compute()

	for _, st := range res.stop {
		plan.AppendStoppedAlloc(st.alloc, st.desc, st.clientStatus)
		ctx.stop(st.alloc)
	}
	for _, a := range allocs {
		if !a.TerminalStatus() && !ctx.stopped[a.ID] {
			ctx.addLive(a.NodeID, a.TaskGroup)
		}
	}
	for _, u := range res.inplace {
		plan.AppendAlloc(u)
	}
	if err := s.scheduleFollowups(plan, res.later, nodeByID, now); err != nil {
		return false, false, err
	}

	s.resetCounts(job)
	for _, p := range res.place {
		st := stackFor(p.tg)
		if st.failed != nil {
			st.failed.CoalescedFailures++
			s.queued[p.tg.Name]++
			continue
		}
		ranked, metric := st.selectNode()
		if ranked == nil {
			s.recordFailure(p.tg.Name, st.failed)
			s.queued[p.tg.Name]++
			continue
		}
		plan.AppendAlloc(s.newAlloc(job, p, ranked, metric, now))
		ctx.place(ranked.node, p.tg.Name, st.ask, ranked.offer)
	}
	if ctx.err != nil {
		return false, false, fmt.Errorf("read state: %w", ctx.err)
	}
	s.classElig, s.escaped = eligibility(stacks, s.failed)

	if plan.IsNoOp() {
		return true, false, nil
	}
	done, progress, newState, err := s.submit(plan)
	if newState != nil {
		s.state = newState
	}
	if err == nil && !done {
		s.logger.Debug("plan partly committed, retrying", "eval_id", s.eval.ID)
	}
	return done, progress, err
}

// newAlloc builds the allocation of one placement.
func (s *genericScheduler) newAlloc(job *structs.Job, p placeRequest, ranked *rankedNode, m *structs.AllocMetric, now time.Time) *structs.Allocation {
	n := ranked.node
	ar, total, tasks := allocatedResources(p.tg, memoryOversubscription(s.state), ranked.offer)
	ns := job.Namespace
	if ns == "" {
		ns = s.eval.Namespace
	}
	a := &structs.Allocation{
		ID:                 structs.GenerateUUID(),
		Namespace:          ns,
		EvalID:             s.eval.ID,
		Name:               structs.AllocName(job.ID, p.tg.Name, p.index),
		NodeID:             n.ID,
		NodeName:           n.Name,
		JobID:              job.ID,
		Job:                job,
		TaskGroup:          p.tg.Name,
		Resources:          total,
		TaskResources:      tasks,
		AllocatedResources: ar,
		Metrics:            m,
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	}
	if p.previous != nil {
		a.PreviousAllocation = p.previous.ID
	}
	if p.reschedule {
		a.RescheduleTracker = nextTracker(reschedulePolicy(job, p.tg), p.previous, now, p.delay)
	}
	return a
}

// scheduleFollowups creates the evaluations that will replace failed
// allocations once their reschedule delay has passed, and records each
// one on its allocation through the plan.
func (s *genericScheduler) scheduleFollowups(plan *structs.Plan, later []laterRequest, nodes map[string]*structs.Node, now time.Time) error {
	sort.SliceStable(later, func(i, j int) bool { return later[i].at.Before(later[j].at) })
	var created []*structs.Evaluation
	var cur *structs.Evaluation
	var start time.Time
	for _, l := range later {
		id, ok := s.followups[l.alloc.ID]
		if !ok {
			if cur == nil || l.at.Sub(start) > followupWindow {
				cur = s.newEval(structs.EvalTriggerRetryFailedAlloc, structs.EvalStatusPending, now)
				cur.WaitUntil = l.at
				start = l.at
				created = append(created, cur)
			} else if l.at.After(cur.WaitUntil) {
				cur.WaitUntil = l.at
			}
			id = cur.ID
			s.followups[l.alloc.ID] = id
		}
		// A node that is not ready would make the plan applier reject
		// the update; the follow-up eval replaces the allocation anyway.
		if n := nodes[l.alloc.NodeID]; n == nil || n.Status != structs.NodeStatusReady {
			continue
		}
		u := *l.alloc
		u.FollowupEvalID = id
		plan.AppendAlloc(&u)
	}
	for _, e := range created {
		if err := s.planner.CreateEval(e); err != nil {
			return fmt.Errorf("create follow-up evaluation: %w", err)
		}
	}
	return nil
}

// eligibility merges what the stacks of failed groups learned about
// computed classes.
func eligibility(stacks map[string]*groupStack, failed map[string]*structs.AllocMetric) (map[string]bool, bool) {
	if len(failed) == 0 {
		return nil, false
	}
	elig := make(map[string]bool)
	escaped := false
	for name := range failed {
		st := stacks[name]
		if st == nil {
			continue
		}
		escaped = escaped || st.stats.escaped
		for class, ok := range st.stats.classElig {
			elig[class] = elig[class] || ok
		}
	}
	return elig, escaped
}

func copyMetrics(m map[string]*structs.AllocMetric) map[string]*structs.AllocMetric {
	if m == nil {
		return nil
	}
	c := make(map[string]*structs.AllocMetric, len(m))
	for k, v := range m {
		c[k] = v.Copy()
	}
	return c
}

// schedulerSettings reads the cluster's placement algorithm and how many
// nodes a placement with affinities or spreads scores.
func schedulerSettings(state State) (string, int, error) {
	cfg, err := state.SchedulerConfig()
	if err != nil {
		return "", 0, fmt.Errorf("read scheduler configuration: %w", err)
	}
	if cfg == nil {
		return structs.SchedulerAlgorithmBinpack, scoredWithPreferences, nil
	}
	algorithm, limit := cfg.SchedulerAlgorithm, int(cfg.NodeLimitForFeasibilityChecks)
	if algorithm == "" {
		algorithm = structs.SchedulerAlgorithmBinpack
	}
	if limit <= 0 {
		limit = scoredWithPreferences
	}
	return algorithm, limit, nil
}

// nodeOrder is the order an attempt's placements visit the nodes in: a
// random permutation when a source of randomness is configured, so that
// workers planning at once rarely pick the same nodes. It is drawn as
// placement asks for positions (Fisher-Yates from the front), the same
// permutation whatever is asked: a one-alloc job on 1,000 nodes draws a
// dozen positions instead of copying and shuffling the whole list. Every
// group of the attempt shares it. It never writes to nodes, which other
// evaluations share.
type nodeOrder struct {
	nodes []*structs.Node
	rand  *rand.Rand
	drawn []*structs.Node
	// moved holds the nodes a draw swapped to a position not yet drawn,
	// by position, while few are drawn; full replaces it beyond
	// sparseDraws: a copy of the list being permuted in place.
	moved map[int]*structs.Node
	full  []*structs.Node
}

// sparseDraws is how many positions are drawn through moved before the
// order copies the list (map updates beyond that cost more than a copy).
const sparseDraws = 64

func newNodeOrder(nodes []*structs.Node, cfg Config) *nodeOrder {
	return &nodeOrder{nodes: nodes, rand: cfg.Rand}
}

// at returns the node at position i, nil past the last.
func (o *nodeOrder) at(i int) *structs.Node {
	if i >= len(o.nodes) {
		return nil
	}
	if o.rand == nil {
		return o.nodes[i]
	}
	for len(o.drawn) <= i {
		o.draw()
	}
	return o.drawn[i]
}

// draw fixes the next position: a node picked at random among those not
// yet drawn.
func (o *nodeOrder) draw() {
	k, n := len(o.drawn), len(o.nodes)
	if o.full == nil && k >= sparseDraws {
		o.full = make([]*structs.Node, n)
		copy(o.full, o.nodes)
		for p, node := range o.moved {
			o.full[p] = node
		}
		copy(o.full, o.drawn)
		o.moved = nil
	}
	j := k + o.rand.IntN(n-k)
	if o.full != nil {
		o.full[k], o.full[j] = o.full[j], o.full[k]
		o.drawn = o.full[:k+1]
		return
	}
	picked, displaced := o.get(j), o.get(k)
	if j != k {
		if o.moved == nil {
			o.moved = make(map[int]*structs.Node)
		}
		o.moved[j] = displaced
	}
	delete(o.moved, k)
	o.drawn = append(o.drawn, picked)
}

func (o *nodeOrder) get(p int) *structs.Node {
	if node, ok := o.moved[p]; ok {
		return node
	}
	return o.nodes[p]
}

// orderIterator walks a nodeOrder once.
type orderIterator struct {
	order *nodeOrder
	i     int
}

func (it *orderIterator) Next() *structs.Node {
	n := it.order.at(it.i)
	if n != nil {
		it.i++
	}
	return n
}
