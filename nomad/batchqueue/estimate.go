package batchqueue

import (
	"container/heap"
	"slices"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Estimate returns the expected start of each waiting workload, in the
// order given (the reserved workload, if any, first, then the line in
// release order): free capacity now, then the running allocs and the
// workloads started earlier in the walk reaching their max_run_duration
// deadlines. A workload starts no earlier than the one before it, as the
// line releases in order. Once a workload needs room that only allocs
// without a deadline hold, its start and every later one are unknown
// (zero). It is a pure function, so every leader estimates the same.
func Estimate(c Cluster, now time.Time, demands []Demand) []time.Time {
	out := make([]time.Time, len(demands))
	free := minus(c.Total, c.Used)
	ends := make(endHeap, 0, len(c.Timed)+len(demands))
	for _, t := range c.Timed {
		ends = append(ends, t)
	}
	heap.Init(&ends)
	at := now
	for i, d := range demands {
		for !fits(free, d.Ask) && ends.Len() > 0 {
			t := heap.Pop(&ends).(TimedAlloc)
			free.Add(t.Res)
			if t.End.After(at) {
				at = t.End
			}
		}
		if !fits(free, d.Ask) {
			return out
		}
		out[i] = at
		free = minus(free, d.Ask)
		if d.MaxRun > 0 {
			heap.Push(&ends, TimedAlloc{End: at.Add(d.MaxRun), Res: d.Ask})
		}
	}
	return out
}

// endHeap orders allocs by deadline.
type endHeap []TimedAlloc

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].End.Before(h[j].End) }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(TimedAlloc)) }
func (h *endHeap) Pop() any {
	old := *h
	n := len(old) - 1
	x := old[n]
	*h = old[:n]
	return x
}

// projectFair is the release order of the fair policy over the whole
// line, assuming every release runs: per namespace in priority order,
// each next release to the namespace with the smallest weighted share of
// what runs plus what the projection released. It is what Plan does a
// round at a time. A held entry keeps its place and takes no room: the
// line skips it.
func projectFair(queued []*structs.BatchQueueEntry, c Cluster, shares map[string]structs.BatchQueueShare, controls Controls, demand func(*structs.BatchQueueEntry) Demand) []*structs.BatchQueueEntry {
	byNS := map[string][]*structs.BatchQueueEntry{}
	for _, e := range queued {
		byNS[e.Namespace] = append(byNS[e.Namespace], e)
	}
	var active []*nsLine
	for ns, es := range byNS {
		slices.SortFunc(es, func(a, b *structs.BatchQueueEntry) int {
			if Less(structs.BatchQueueOrderPriority, a, b) {
				return -1
			}
			return 1
		})
		es = arrange(es, controls)
		l := &nsLine{ns: ns, share: shareOf(shares, ns), usage: c.Usage[ns]}
		l.next = func() (*structs.BatchQueueEntry, bool) {
			if len(es) == 0 {
				return nil, false
			}
			e := es[0]
			es = es[1:]
			return e, true
		}
		if l.advance() {
			active = append(active, l)
		}
	}
	if controls.Len() > 0 {
		all := demand
		demand = func(e *structs.BatchQueueEntry) Demand {
			if controls.Held(e) {
				return Demand{}
			}
			return all(e)
		}
	}
	out := make([]*structs.BatchQueueEntry, 0, len(queued))
	for len(active) > 0 {
		i := 0
		for j := 1; j < len(active); j++ {
			if fairBefore(active[j], active[i], c.Total) || (!fairBefore(active[i], active[j], c.Total) && active[j].ns < active[i].ns) {
				i = j
			}
		}
		l := active[i]
		d := l.headDemand(demand)
		out = append(out, l.head)
		l.usage.Res.Add(d.Ask)
		l.usage.Allocs += d.Allocs
		if !l.advance() {
			active = append(active[:i], active[i+1:]...)
		}
	}
	return out
}
