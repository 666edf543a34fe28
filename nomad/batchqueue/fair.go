package batchqueue

import (
	"iter"
	"slices"

	"github.com/nomadq/nomadq/structs"
)

// Share is a namespace's weighted dominant share of the cluster: the
// larger of its CPU and memory fractions of the total, over its weight.
// A cluster with no capacity gives every namespace share 0, so the order
// falls back to priority and first submission.
func Share(u structs.ComparableResources, total structs.ComparableResources, weight float64) float64 {
	if weight <= 0 {
		weight = 1
	}
	return structs.DominantShare(u, total) / weight
}

// nsLine is one namespace's line as the fair order pulls it.
type nsLine struct {
	ns     string
	next   func() (*structs.BatchQueueEntry, bool)
	head   *structs.BatchQueueEntry
	demand *Demand // the head's, once read
	share  structs.BatchQueueShare
	usage  Usage
}

func (l *nsLine) advance() bool {
	l.head, l.demand = nil, nil
	e, ok := l.next()
	l.head = e
	return ok
}

func (l *nsLine) headDemand(demand func(*structs.BatchQueueEntry) Demand) Demand {
	if l.demand == nil {
		d := demand(l.head)
		l.demand = &d
	}
	return *l.demand
}

// fairBefore reports whether a's head goes before b's: smaller share,
// then higher priority, then first submission. Raft indexes are unique,
// so the order is total and every leader computes the same one.
func fairBefore(a, b *nsLine, total structs.ComparableResources) bool {
	sa, sb := Share(a.usage.Res, total, a.share.Weight), Share(b.usage.Res, total, b.share.Weight)
	if sa != sb {
		return sa < sb
	}
	if a.head.Priority != b.head.Priority {
		return a.head.Priority > b.head.Priority
	}
	return a.head.EnqueueIndex < b.head.EnqueueIndex
}

// shareOf is a namespace's settings, weight 1 and no caps when unset.
func shareOf(shares map[string]structs.BatchQueueShare, ns string) structs.BatchQueueShare {
	if s, ok := shares[ns]; ok {
		if s.Weight <= 0 {
			s.Weight = 1
		}
		return s
	}
	return structs.BatchQueueShare{Weight: 1}
}

// fair releases up to free entries by weighted share: each release goes
// to the head of the namespace whose live batch allocs, plus what this
// round released, hold the smallest weighted share. A namespace at its
// placing or running cap is skipped for the round. Behind a reservation
// only entries that may backfill are released.
func (p *Decision) fair(in Input, demand func(*structs.BatchQueueEntry) Demand, res *reserved, placing map[string]int, free int) {
	names := make([]string, 0, len(in.Lines))
	for ns := range in.Lines {
		names = append(names, ns)
	}
	slices.Sort(names) // iteration order of a map must not leak into the pulls
	active := make([]*nsLine, 0, len(names))
	for _, ns := range names {
		next, stop := iter.Pull(in.Lines[ns])
		defer stop()
		l := &nsLine{ns: ns, next: next, share: shareOf(in.Shares, ns), usage: in.Cluster.Usage[ns]}
		if l.advance() {
			active = append(active, l)
		}
	}
	total := in.Cluster.Total
	tried := 0
	for free > 0 && len(active) > 0 {
		i := 0
		for j := 1; j < len(active); j++ {
			if fairBefore(active[j], active[i], total) {
				i = j
			}
		}
		l := active[i]
		drop := func() { active = slices.Delete(active, i, i+1) }
		if c := l.share.MaxPlacing; c > 0 && placing[l.ns] >= c {
			p.limit(l.ns)
			drop()
			continue
		}
		d := l.headDemand(demand)
		if c := l.share.MaxRunning; c > 0 && l.usage.Allocs > 0 && l.usage.Allocs+d.Allocs > c {
			// A job larger than the cap still runs alone, or it would
			// wait for ever.
			p.limit(l.ns)
			p.WatchCapacity = true
			drop()
			continue
		}
		if res != nil {
			if tried >= backfillDepth {
				return
			}
			tried++
			if !res.admit(d, in.Now) {
				if !l.advance() {
					drop()
				}
				continue
			}
			p.Backfilled = append(p.Backfilled, l.head)
		}
		p.Release = append(p.Release, l.head)
		free--
		placing[l.ns]++
		l.usage.Res.Add(d.Ask)
		l.usage.Allocs += d.Allocs
		if !l.advance() {
			drop()
		}
	}
}

func (p *Decision) limit(ns string) {
	if p.Limited == nil {
		p.Limited = map[string]bool{}
	}
	p.Limited[ns] = true
}
