package scheduler

import (
	"strconv"

	"github.com/nomadq/nomadq/structs"
)

// recordFiltered counts a node a placement-time check rejected.
func recordFiltered(m *structs.AllocMetric, n *structs.Node, key string) {
	m.NodesFiltered++
	if m.ConstraintFiltered == nil {
		m.ConstraintFiltered = make(map[string]int)
	}
	m.ConstraintFiltered[key]++
	if n.ComputedClass != "" {
		if m.ClassFiltered == nil {
			m.ClassFiltered = make(map[string]int)
		}
		m.ClassFiltered[n.ComputedClass]++
	}
}

// distinctHostsIterator drops nodes that already run an allocation of the
// job (job-level constraint) or of the group (group-level constraint).
type distinctHostsIterator struct {
	ctx      *evalContext
	source   nodeIterator
	group    string
	jobLevel bool
	key      string
}

func (it *distinctHostsIterator) Next() *structs.Node {
	for {
		n := it.source.Next()
		if n == nil {
			return nil
		}
		var taken bool
		if it.jobLevel {
			taken = it.ctx.onNode[n.ID] > 0
		} else {
			taken = it.ctx.onNodeGroup[nodeGroup{n.ID, it.group}] > 0
		}
		if taken {
			recordFiltered(it.ctx.metric, n, it.key)
			continue
		}
		return n
	}
}

// distinctHostsEnabled reads the optional RTarget of distinct_hosts, which
// may switch it off with "false".
func distinctHostsEnabled(c *structs.Constraint) bool {
	if c.RTarget == "" {
		return true
	}
	b, err := strconv.ParseBool(c.RTarget)
	return err != nil || b
}

// distinctPropertyIterator drops nodes whose value of a property is already
// used by RTarget (default 1) live allocations of the job or group.
type distinctPropertyIterator struct {
	ctx      *evalContext
	source   nodeIterator
	c        *structs.Constraint
	key      string
	group    string
	jobLevel bool
	limit    int
	counts   map[string]int
	seen     int
}

func newDistinctPropertyIterator(ctx *evalContext, source nodeIterator, c *structs.Constraint, group string, jobLevel bool) *distinctPropertyIterator {
	limit := 1
	if c.RTarget != "" {
		if v, err := strconv.Atoi(c.RTarget); err == nil && v > 0 {
			limit = v
		}
	}
	return &distinctPropertyIterator{
		ctx: ctx, source: source, c: c, key: c.String(), group: group,
		jobLevel: jobLevel, limit: limit, counts: make(map[string]int),
	}
}

// catchUp folds allocations that became live since the last call.
func (it *distinctPropertyIterator) catchUp() {
	for ; it.seen < len(it.ctx.live); it.seen++ {
		la := it.ctx.live[it.seen]
		if !it.jobLevel && la.group != it.group {
			continue
		}
		n := it.ctx.node(la.nodeID)
		if n == nil {
			continue
		}
		if v, ok := resolveTarget(it.c.LTarget, n); ok {
			it.counts[v]++
		}
	}
}

func (it *distinctPropertyIterator) Next() *structs.Node {
	it.catchUp()
	for {
		n := it.source.Next()
		if n == nil {
			return nil
		}
		v, ok := resolveTarget(it.c.LTarget, n)
		if !ok || it.counts[v] >= it.limit {
			recordFiltered(it.ctx.metric, n, it.key)
			continue
		}
		return n
	}
}

// spreadIterator scores nodes by how much placing there moves the group
// towards its spread targets (or an even spread when none are given).
type spreadIterator struct {
	ctx     *evalContext
	source  rankIterator
	group   string
	count   int
	spreads []*spreadState
	weights float64
	seen    int
}

type spreadState struct {
	s       *structs.Spread
	targets map[string]float64 // value -> desired allocations
	counts  map[string]int
}

func newSpreadIterator(ctx *evalContext, source rankIterator, spreads []*structs.Spread, group string, count int, feasible []*structs.Node) *spreadIterator {
	it := &spreadIterator{ctx: ctx, source: source, group: group, count: count}
	for _, s := range spreads {
		st := &spreadState{s: s, counts: make(map[string]int)}
		if len(s.SpreadTarget) > 0 {
			st.targets = make(map[string]float64, len(s.SpreadTarget))
			for _, t := range s.SpreadTarget {
				st.targets[t.Value] = float64(t.Percent) / 100 * float64(count)
			}
		} else {
			// Even spread: every value a feasible node has starts at 0.
			for _, n := range feasible {
				if v, ok := resolveTarget(s.Attribute, n); ok {
					st.counts[v] += 0
				}
			}
		}
		it.spreads = append(it.spreads, st)
		it.weights += abs(float64(s.Weight))
	}
	return it
}

func (it *spreadIterator) catchUp() {
	for ; it.seen < len(it.ctx.live); it.seen++ {
		la := it.ctx.live[it.seen]
		if la.group != it.group {
			continue
		}
		n := it.ctx.node(la.nodeID)
		if n == nil {
			continue
		}
		for _, st := range it.spreads {
			if v, ok := resolveTarget(st.s.Attribute, n); ok {
				st.counts[v]++
			}
		}
	}
}

func (it *spreadIterator) Next() *rankedNode {
	it.catchUp()
	r := it.source.Next()
	if r == nil || it.weights == 0 {
		return r
	}
	var sum float64
	for _, st := range it.spreads {
		sum += float64(st.s.Weight) * st.score(r.node)
	}
	r.addScore(scoreSpread, sum/it.weights)
	return r
}

// score is in [-1, 1]: positive where allocations are missing.
func (st *spreadState) score(n *structs.Node) float64 {
	v, ok := resolveTarget(st.s.Attribute, n)
	if !ok {
		return -1
	}
	cur := float64(st.counts[v])
	if st.targets != nil {
		want, ok := st.targets[v]
		if !ok || want == 0 {
			return -1
		}
		return clamp((want - cur) / want)
	}
	lo, hi := -1, -1
	for _, c := range st.counts {
		if lo < 0 || c < lo {
			lo = c
		}
		if c > hi {
			hi = c
		}
	}
	if hi == lo {
		return 0
	}
	return clamp(1 - 2*(cur-float64(lo))/float64(hi-lo))
}

func clamp(f float64) float64 {
	switch {
	case f > 1:
		return 1
	case f < -1:
		return -1
	}
	return f
}
