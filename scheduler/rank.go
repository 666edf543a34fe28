package scheduler

import (
	"github.com/nomadq/nomadq/structs"
)

// Score names recorded in NodeScoreMeta, as Nomad names them.
const (
	scoreBinPack         = "binpack"
	scoreJobAntiAffinity = "job-anti-affinity"
	scoreNodeAffinity    = "node-affinity"
	scoreSpread          = "allocation-spread"
)

// maxRetainedScores is how many of the best-scored nodes a placement
// metric keeps.
const maxRetainedScores = 5

// rankedNode is a feasible node that fits, with its scores. The final
// score is the mean of the individual ones, each in [-1, 1].
type rankedNode struct {
	node *structs.Node
	// offer holds the ports and cores assigned on the node; nil when
	// the group takes neither.
	offer  *offer
	names  [4]string
	scores [4]float64
	n      int
	final  float64
}

func (r *rankedNode) addScore(name string, s float64) {
	if r.n < len(r.scores) {
		r.names[r.n], r.scores[r.n] = name, s
		r.n++
	}
}

func (r *rankedNode) normalize() {
	var sum float64
	for i := 0; i < r.n; i++ {
		sum += r.scores[i]
	}
	if r.n > 0 {
		r.final = sum / float64(r.n)
	}
}

// rankIterator yields scored nodes.
type rankIterator interface {
	Next() *rankedNode
}

// binPackIterator turns feasible nodes into ranked ones: it drops nodes
// the group's resources do not fit on (recording the exhausted dimension)
// and scores the rest by how full they would be (binpack) or how empty
// (spread).
type binPackIterator struct {
	ctx    *evalContext
	source nodeIterator
	ask    structs.ComparableResources
	// tg is set when the group takes ports or cores, which are
	// assigned per node.
	tg     *structs.TaskGroup
	spread bool
	// arena holds the ranked nodes of the current pass; only the
	// winner's node outlives it.
	arena []rankedNode
}

func (it *binPackIterator) reset() { it.arena = it.arena[:0] }

func (it *binPackIterator) Next() *rankedNode {
	for {
		n := it.source.Next()
		if n == nil {
			return nil
		}
		u := it.ctx.usageOf(n)
		var o *offer
		total := u.used
		if it.tg != nil {
			var dim string
			if o, dim = makeOffer(n, u, it.tg, it.ask); o == nil {
				recordExhausted(it.ctx.metric, n, dim)
				continue
			}
			total.Add(o.ask)
		} else {
			total.Add(it.ask)
			if ok, dim := u.capacity.Superset(total); !ok {
				recordExhausted(it.ctx.metric, n, dim)
				continue
			}
		}
		score := fullness(u.capacity, total)
		if it.spread {
			score = 1 - score
		}
		if len(it.arena) == cap(it.arena) {
			// Growing would move earlier entries that are still
			// referenced; start a fresh block instead.
			it.arena = make([]rankedNode, 0, max(16, 2*cap(it.arena)))
		}
		it.arena = append(it.arena, rankedNode{node: n, offer: o})
		r := &it.arena[len(it.arena)-1]
		r.addScore(scoreBinPack, score)
		return r
	}
}

// fullness is the mean of the CPU and memory utilisation, in [0, 1].
func fullness(capacity, used structs.ComparableResources) float64 {
	var sum float64
	var dims int
	if capacity.CPU > 0 {
		sum += float64(used.CPU) / float64(capacity.CPU)
		dims++
	}
	if capacity.MemoryMB > 0 {
		sum += float64(used.MemoryMB) / float64(capacity.MemoryMB)
		dims++
	}
	if dims == 0 {
		return 0
	}
	return sum / float64(dims)
}

func recordExhausted(m *structs.AllocMetric, n *structs.Node, dim string) {
	m.NodesExhausted++
	if m.DimensionExhausted == nil {
		m.DimensionExhausted = make(map[string]int)
	}
	m.DimensionExhausted[dim]++
	if n.ComputedClass != "" {
		if m.ClassExhausted == nil {
			m.ClassExhausted = make(map[string]int)
		}
		m.ClassExhausted[n.ComputedClass]++
	}
}

// jobAntiAffinityIterator penalises nodes that already run allocations of
// the same group, so that service groups do not pile onto one node.
type jobAntiAffinityIterator struct {
	ctx    *evalContext
	source rankIterator
	group  string
	count  int
}

func (it *jobAntiAffinityIterator) Next() *rankedNode {
	r := it.source.Next()
	if r == nil {
		return nil
	}
	if c := it.ctx.onNodeGroup[nodeGroup{r.node.ID, it.group}]; c > 0 && it.count > 0 {
		p := -float64(c+1) / float64(it.count)
		if p < -1 {
			p = -1
		}
		r.addScore(scoreJobAntiAffinity, p)
	}
	return r
}

// affinityIterator scores nodes by the weighted affinities they match.
type affinityIterator struct {
	ctx        *evalContext
	source     rankIterator
	affinities []*structs.Affinity
	total      float64
}

func newAffinityIterator(ctx *evalContext, source rankIterator, affs []*structs.Affinity) *affinityIterator {
	it := &affinityIterator{ctx: ctx, source: source, affinities: affs}
	for _, a := range affs {
		it.total += abs(float64(a.Weight))
	}
	return it
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func (it *affinityIterator) Next() *rankedNode {
	r := it.source.Next()
	if r == nil || it.total == 0 {
		return r
	}
	var sum float64
	for _, a := range it.affinities {
		l, lok := resolveTarget(a.LTarget, r.node)
		rt, rok := resolveTarget(a.RTarget, r.node)
		if checkOperand(it.ctx, a.Operand, l, lok, rt, rok) {
			sum += float64(a.Weight)
		}
	}
	if sum != 0 {
		r.addScore(scoreNodeAffinity, sum/it.total)
	}
	return r
}

// limitIterator stops after a number of ranked nodes: scoring a few
// candidates per placement ("power of k choices") is nearly as good as
// scoring all of them on a large cluster and much cheaper.
type limitIterator struct {
	source rankIterator
	limit  int
	seen   int
}

func (it *limitIterator) Next() *rankedNode {
	if it.seen >= it.limit {
		return nil
	}
	r := it.source.Next()
	if r != nil {
		it.seen++
	}
	return r
}

func (it *limitIterator) reset() { it.seen = 0 }

// maxScoreIterator drains its source and yields the best node, recording
// the best few scores in the placement metric.
type maxScoreIterator struct {
	ctx    *evalContext
	source rankIterator
	buf    []*rankedNode
}

func (it *maxScoreIterator) Next() *rankedNode {
	it.buf = it.buf[:0]
	var best *rankedNode
	for r := it.source.Next(); r != nil; r = it.source.Next() {
		r.normalize()
		it.buf = append(it.buf, r)
		if best == nil || r.final > best.final {
			best = r
		}
	}
	if best != nil {
		it.record()
	}
	return best
}

func (it *maxScoreIterator) record() {
	// Insertion sort: the buffer holds a handful of candidates.
	for i := 1; i < len(it.buf); i++ {
		for j := i; j > 0 && it.buf[j].final > it.buf[j-1].final; j-- {
			it.buf[j], it.buf[j-1] = it.buf[j-1], it.buf[j]
		}
	}
	n := min(len(it.buf), maxRetainedScores)
	metas := make([]*structs.NodeScoreMeta, n)
	backing := make([]structs.NodeScoreMeta, n)
	total := 0
	for i := 0; i < n; i++ {
		total += it.buf[i].n
	}
	scores := make(structs.NodeScores, 0, total)
	for i := 0; i < n; i++ {
		r := it.buf[i]
		m := &backing[i]
		m.NodeID = r.node.ID
		m.NormScore = r.final
		start := len(scores)
		for k := 0; k < r.n; k++ {
			scores = append(scores, structs.NodeScore{Name: r.names[k], Score: r.scores[k]})
		}
		m.Scores = scores[start:len(scores):len(scores)]
		metas[i] = m
	}
	it.ctx.metric.ScoreMetaData = metas
}
