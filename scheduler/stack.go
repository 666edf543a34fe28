package scheduler

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"github.com/nomadq/nomadq/structs"
)

// nodeIterator yields nodes one at a time; nil marks the end.
type nodeIterator interface {
	Next() *structs.Node
}

// feasibleNodes is a group's statically feasible nodes in visiting
// order, found as placements ask for them: a one-alloc job on a thousand
// nodes checks the few it scores, not all of them, as Nomad's stack pulls
// its candidates. What needs every feasible node (spread, the verdict on
// a failed placement, the system scheduler) calls all.
type feasibleNodes struct {
	checks *feasibilityIterator
	nodes  []*structs.Node
	done   bool
}

// at returns the i-th feasible node, checking further nodes as needed;
// nil when fewer than i+1 nodes are feasible.
func (f *feasibleNodes) at(i int) *structs.Node {
	for i >= len(f.nodes) && !f.done {
		if n := f.checks.Next(); n != nil {
			f.nodes = append(f.nodes, n)
		} else {
			f.done = true
		}
	}
	if i < len(f.nodes) {
		return f.nodes[i]
	}
	return nil
}

// all checks every remaining node and returns the feasible ones.
func (f *feasibleNodes) all() []*structs.Node {
	for !f.done {
		f.at(len(f.nodes))
	}
	return f.nodes
}

// circularIterator walks the feasible nodes at most once per pass, each
// pass starting where the last one stopped, so that consecutive
// placements look at different candidates. It counts the nodes a pass
// evaluates.
type circularIterator struct {
	ctx    *evalContext
	set    *feasibleNodes
	offset int
	seen   int
}

func (it *circularIterator) Next() *structs.Node {
	if it.set.done && it.seen >= len(it.set.nodes) {
		return nil
	}
	n := it.set.at(it.offset)
	if n == nil {
		// Past the last feasible node (the set is complete now): wrap.
		if it.seen >= len(it.set.nodes) {
			return nil
		}
		it.offset = 0
		n = it.set.nodes[0]
	}
	it.offset++
	it.seen++
	it.ctx.metric.NodesEvaluated++
	return n
}

func (it *circularIterator) reset() { it.seen = 0 }

// Candidate limits: a placement scores at most candidateLimit(n) fitting
// nodes out of n feasible ones, max(2, ceil(log2 n)) — 13 on a 5,000
// node cluster — as Nomad does for batch work. Affinities and spreads
// only pay off when many nodes are compared, so groups with them score up
// to prefLimit nodes: the scheduler configuration's
// NodeLimitForFeasibilityChecks, or scoredWithPreferences when it is 0.
const scoredWithPreferences = 256

func candidateLimit(n int, preferences bool, prefLimit int) int {
	l := 2
	if n > 1 {
		if lg := bits.Len(uint(n - 1)); lg > l {
			l = lg
		}
	}
	if prefLimit <= 0 {
		prefLimit = scoredWithPreferences
	}
	if preferences {
		l = prefLimit
	}
	return l
}

// groupStack places allocations of one task group. Static feasibility is
// computed once (feasibilityIterator over every node); each placement
// then runs the chain
//
//	circular source -> distinct_hosts -> distinct_property -> binpack
//	  -> job anti-affinity -> affinity -> spread -> limit -> max score
//
// over the feasible nodes.
type groupStack struct {
	ctx      *evalContext
	job      *structs.Job
	tg       *structs.TaskGroup
	ask      structs.ComparableResources
	stats    *filterStats
	checks   *feasibilityIterator
	feasible *feasibleNodes
	// inPool is how many ready nodes the job's node pool and
	// datacenters hold, whether checked yet or not.
	inPool  int
	source  *circularIterator
	binpack *binPackIterator
	limit   *limitIterator
	top     *maxScoreIterator

	// failed is the metric of the first placement that found no node;
	// later placements of the group are coalesced into it.
	failed *structs.AllocMetric
}

// ready counts the ready nodes by pool and datacenter (see
// structs.CountReadyNodes).
func newGroupStack(ctx *evalContext, job *structs.Job, tg *structs.TaskGroup, nodes *nodeOrder, ready map[string]map[string]int, algorithm string) *groupStack {
	s := &groupStack{ctx: ctx, job: job, tg: tg, ask: tg.Ask()}
	s.checks = newFeasibilityIterator(ctx, &orderIterator{order: nodes}, job, tg)
	s.stats = s.checks.stats
	s.feasible = &feasibleNodes{checks: s.checks}
	s.inPool = s.checks.inPool(ready)
	s.source = &circularIterator{ctx: ctx, set: s.feasible}
	var it nodeIterator = s.source
	addDynamic := func(cs []*structs.Constraint, jobLevel bool) {
		for _, c := range cs {
			switch {
			case c == nil:
			case c.Operand == structs.ConstraintDistinctHosts && distinctHostsEnabled(c):
				it = &distinctHostsIterator{ctx: ctx, source: it, group: tg.Name, jobLevel: jobLevel, key: c.String()}
			case c.Operand == structs.ConstraintDistinctProperty:
				it = newDistinctPropertyIterator(ctx, it, c, tg.Name, jobLevel)
			}
		}
	}
	addDynamic(job.Constraints, true)
	addDynamic(tg.Constraints, false)

	s.binpack = &binPackIterator{ctx: ctx, source: it, ask: s.ask, spread: algorithm == structs.SchedulerAlgorithmSpread}
	if needsOffer(tg) {
		s.binpack.tg = tg
	}
	var rank rankIterator = s.binpack
	if job.Type == structs.JobTypeService {
		rank = &jobAntiAffinityIterator{ctx: ctx, source: rank, group: tg.Name, count: tg.Count}
	}
	var affs []*structs.Affinity
	affs = append(affs, job.Affinities...)
	affs = append(affs, tg.Affinities...)
	for _, t := range tg.Tasks {
		affs = append(affs, t.Affinities...)
	}
	if len(affs) > 0 {
		rank = newAffinityIterator(ctx, rank, affs)
	}
	spreads := append(append([]*structs.Spread(nil), job.Spreads...), tg.Spreads...)
	if len(spreads) > 0 {
		rank = newSpreadIterator(ctx, rank, spreads, tg.Name, tg.Count, s.feasible.all())
	}
	s.limit = &limitIterator{source: rank, limit: candidateLimit(s.inPool, len(affs)+len(spreads) > 0, ctx.nodeLimit)}
	s.top = &maxScoreIterator{ctx: ctx, source: s.limit}
	return s
}

// selectNode picks a node for one more allocation of the group and
// returns it with the placement's metric; nil when no node fits.
func (s *groupStack) selectNode() (*rankedNode, *structs.AllocMetric) {
	m := &structs.AllocMetric{NodePool: s.stats.metric.NodePool, NodesInPool: s.inPool}
	s.ctx.metric = m
	s.source.reset()
	s.binpack.reset()
	s.limit.reset()
	best := s.top.Next()
	if best == nil {
		s.failed = s.failureMetric(m)
	}
	return best, m
}

// failureMetric merges the static filtering of every node with what the
// failed pass saw among the feasible ones.
func (s *groupStack) failureMetric(pass *structs.AllocMetric) *structs.AllocMetric {
	s.feasible.all() // the static filtering of every node
	m := s.stats.metric.Copy()
	m.NodesFiltered += pass.NodesFiltered
	for k, v := range pass.ConstraintFiltered {
		if m.ConstraintFiltered == nil {
			m.ConstraintFiltered = make(map[string]int)
		}
		m.ConstraintFiltered[k] += v
	}
	for k, v := range pass.ClassFiltered {
		if m.ClassFiltered == nil {
			m.ClassFiltered = make(map[string]int)
		}
		m.ClassFiltered[k] += v
	}
	m.NodesExhausted = pass.NodesExhausted
	m.DimensionExhausted = pass.DimensionExhausted
	m.ClassExhausted = pass.ClassExhausted
	m.Infeasible, m.InfeasibleReason = s.verdict()
	return m
}

// feasibleOn reports whether the group could run on a node as far as
// static checks go, whatever the node's eligibility; in-place updates use
// it to make sure a changed job still fits where the allocation runs.
func (s *groupStack) feasibleOn(n *structs.Node) bool {
	if n == nil || n.Status != structs.NodeStatusReady {
		return false
	}
	ok, _ := s.checks.runPre(n)
	if ok {
		ok, _ = s.checks.runClassed(n)
	}
	if ok {
		ok, _ = s.checks.runUnique(n)
	}
	return ok
}

// verdict decides whether the group can be placed on no node whatever the
// current usage, and says why.
func (s *groupStack) verdict() (bool, string) {
	feasible := s.feasible.all()
	st := s.stats
	if st.metric.NodesEvaluated == 0 {
		if st.notReady == 0 {
			return true, "no nodes are registered"
		}
		return true, fmt.Sprintf("no node is ready and eligible (%d not ready or ineligible)", st.notReady)
	}
	if len(feasible) == 0 {
		return true, s.filterReason()
	}
	var largest structs.ComparableResources
	for _, n := range feasible {
		c := n.Comparable()
		if ok, _ := c.Superset(s.ask); ok {
			return false, ""
		}
		largest.CPU = max(largest.CPU, c.CPU)
		largest.MemoryMB = max(largest.MemoryMB, c.MemoryMB)
		largest.DiskMB = max(largest.DiskMB, c.DiskMB)
	}
	const prefix = "resources exceed every node's capacity: "
	switch {
	case s.ask.CPU > largest.CPU:
		return true, fmt.Sprintf("%scpu %d MHz asked, largest node has %d MHz", prefix, s.ask.CPU, largest.CPU)
	case s.ask.MemoryMB > largest.MemoryMB:
		return true, fmt.Sprintf("%smemory %d MB asked, largest node has %d MB", prefix, s.ask.MemoryMB, largest.MemoryMB)
	case s.ask.DiskMB > largest.DiskMB:
		return true, fmt.Sprintf("%sdisk %d MB asked, largest node has %d MB", prefix, s.ask.DiskMB, largest.DiskMB)
	}
	return true, fmt.Sprintf("%sno node has cpu %d MHz, memory %d MB and disk %d MB at once",
		prefix, s.ask.CPU, s.ask.MemoryMB, s.ask.DiskMB)
}

// filterReason names the filter that left no feasible node.
func (s *groupStack) filterReason() string {
	st := s.stats
	pool := st.details["node pool"]
	dc := st.details["datacenter"]
	if st.passedLocation == 0 {
		dcs := "[" + strings.Join(s.job.Datacenters, " ") + "]"
		switch {
		case dc == 0:
			return fmt.Sprintf("no ready nodes in node pool %q", st.metric.NodePool)
		case pool == 0:
			return "no nodes in datacenters " + dcs
		}
		return fmt.Sprintf("no nodes in node pool %q and datacenters %s", st.metric.NodePool, dcs)
	}
	type entry struct {
		detail string
		count  int
	}
	var rest []entry
	for _, d := range st.detailOrder {
		if d == "node pool" || d == "datacenter" {
			continue
		}
		rest = append(rest, entry{d, st.details[d]})
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].count > rest[j].count })
	if len(rest) == 1 {
		return allFiltered(rest[0].detail, rest[0].count)
	}
	parts := make([]string, len(rest))
	for i, e := range rest {
		parts[i] = someFiltered(e.detail, e.count)
	}
	return fmt.Sprintf("no node passes every check (%d nodes in the datacenters and pool): %s",
		st.passedLocation, strings.Join(parts, ", "))
}

func plural(n int) string {
	if n == 1 {
		return "1 node"
	}
	return fmt.Sprintf("%d nodes", n)
}

func allFiltered(detail string, n int) string {
	if d, ok := strings.CutSuffix(detail, " missing"); ok {
		return "no node has " + d
	}
	if d, ok := strings.CutSuffix(detail, " unhealthy"); ok {
		return fmt.Sprintf("%s is unhealthy on all %s", d, plural(n))
	}
	if n == 1 {
		return detail + " filtered the only node"
	}
	return fmt.Sprintf("%s filtered all %d nodes", detail, n)
}

func someFiltered(detail string, n int) string {
	if d, ok := strings.CutSuffix(detail, " missing"); ok {
		return fmt.Sprintf("%s missing on %s", d, plural(n))
	}
	if d, ok := strings.CutSuffix(detail, " unhealthy"); ok {
		return fmt.Sprintf("%s unhealthy on %s", d, plural(n))
	}
	return fmt.Sprintf("%s filtered %s", detail, plural(n))
}
