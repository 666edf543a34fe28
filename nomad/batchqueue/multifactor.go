package batchqueue

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Scorer computes queued entries' effective priorities in the
// multifactor order at one instant: the weighted sum of the job's
// priority, its time in the queue, its namespace's fair share of decayed
// usage and its size.
type Scorer struct {
	m     structs.BatchQueueMultifactor
	now   time.Time
	total structs.ComparableResources
	// fair is each namespace's fair-share factor.
	fair map[string]float64
	// usage is every namespace's usage, when FairShareWeight is set.
	usage  []*structs.BatchQueueNamespaceUsage
	demand func(*structs.BatchQueueEntry) Demand
}

// NewScorer builds the scorer of one round from the configuration, the
// cluster (capacity and usage spans), the namespaces' weights and usage
// resets, and the namespaces with queued entries.
func NewScorer(m structs.BatchQueueMultifactor, now time.Time, c Cluster, shares map[string]structs.BatchQueueShare,
	resets map[string]time.Time, queuedNS []string, demand func(*structs.BatchQueueEntry) Demand) *Scorer {
	s := &Scorer{m: m, now: now, total: c.Total, fair: map[string]float64{}, demand: demand}
	if m.FairShareWeight > 0 {
		s.usage = Usages(c.Spans, c.Folded, shares, resets, queuedNS, now, m.UsageHalfLife)
		for _, u := range s.usage {
			s.fair[u.Namespace] = u.FairShare
		}
	}
	return s
}

// Factors are e's weighted factors.
func (s *Scorer) Factors(e *structs.BatchQueueEntry) structs.BatchQueueFactors {
	var f structs.BatchQueueFactors
	m := s.m
	if m.PriorityWeight > 0 {
		f.Priority = m.PriorityWeight * min(1, max(0, float64(e.Priority)/100))
	}
	if m.AgeWeight > 0 && m.MaxAge > 0 {
		wait := s.now.Sub(time.Unix(0, e.EnqueueTime))
		f.Age = m.AgeWeight * min(1, max(0, wait.Seconds()/m.MaxAge.Seconds()))
	}
	if m.FairShareWeight > 0 {
		fs, ok := s.fair[e.Namespace]
		if !ok {
			fs = 1 // no usage and unknown weight: as a namespace that never ran
		}
		f.FairShare = m.FairShareWeight * fs
	}
	if m.SizeWeight > 0 && s.demand != nil {
		f.JobSize = m.SizeWeight * (1 - min(1, Share(s.demand(e).Ask, s.total, 1)))
	}
	return f
}

// scored is a queued entry with its factors, in the order it came.
type scored struct {
	e      *structs.BatchQueueEntry
	f      structs.BatchQueueFactors
	sum    float64 // f.Sum(), once
	topped bool
}

// rank sorts entries by effective priority, highest first, ties by
// first submission (Raft index, unique, so every leader agrees). An
// entry an operator topped goes ahead of the rest of its namespace, as in
// the other orders: the namespace's places in the ranking are taken by
// its topped entries first, in the order they came (newest top first),
// then by its others.
func rank(in []scored) []scored {
	out := slices.Clone(in)
	for i := range out {
		out[i].sum = out[i].f.Sum()
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.sum, a.sum); c != 0 {
			return c
		}
		return cmp.Compare(a.e.EnqueueIndex, b.e.EnqueueIndex)
	})
	tops := map[string][]scored{}
	for _, s := range in {
		if s.topped {
			tops[s.e.Namespace] = append(tops[s.e.Namespace], s)
		}
	}
	if len(tops) == 0 {
		return out
	}
	rest := map[string][]scored{}
	for _, s := range out {
		if !s.topped {
			rest[s.e.Namespace] = append(rest[s.e.Namespace], s)
		}
	}
	for i, s := range out {
		ns := s.e.Namespace
		if t := tops[ns]; len(t) > 0 {
			out[i], tops[ns] = t[0], t[1:]
			continue
		}
		out[i], rest[ns] = rest[ns][0], rest[ns][1:]
	}
	return out
}

// LineStats is what a multifactor round saw of the line: its effective
// priorities' median, 90th percentile and highest (0 for an empty line),
// and, when FairShareWeight is set, every namespace's usage.
type LineStats struct {
	P50, P90, Max float64
	Usage         []*structs.BatchQueueNamespaceUsage
}

// lineStats summarises the ranked entries, highest sum first.
func lineStats(ranked []scored, usage []*structs.BatchQueueNamespaceUsage) *LineStats {
	s := &LineStats{Usage: usage}
	n := len(ranked)
	if n == 0 {
		return s
	}
	sums := make([]float64, n)
	for i, r := range ranked {
		sums[i] = r.sum
	}
	slices.Sort(sums) // tops put some entries ahead of higher sums
	// The nearest-rank quantile: the smallest sum at or above q of them.
	at := func(q float64) float64 { return sums[max(0, int(math.Ceil(q*float64(n)))-1)] }
	s.P50, s.P90, s.Max = at(0.5), at(0.9), sums[n-1]
	return s
}

// multifactor releases up to free entries by effective priority. It
// reads the whole line, since an entry's rank moves with time and usage
// and no heap keeps it: a round costs O(n log n) for n queued entries,
// plus one job read each when SizeWeight is set. A namespace at its
// placing or running cap is skipped for the round; behind a reservation
// only entries that may backfill are released.
func (p *Decision) multifactor(in Input, demand func(*structs.BatchQueueEntry) Demand, res *reserved, placing map[string]int, free int) {
	var entries []scored
	nsSeen := map[string]bool{}
	var names []string
	for e := range in.Line {
		entries = append(entries, scored{e: e, topped: in.Topped != nil && in.Topped(e)})
		if !nsSeen[e.Namespace] {
			nsSeen[e.Namespace] = true
			names = append(names, e.Namespace)
		}
	}
	sc := NewScorer(in.Config.Multifactor, in.Now, in.Cluster, in.Shares, in.Resets, names, demand)
	for i := range entries {
		entries[i].f = sc.Factors(entries[i].e)
	}
	ranked := rank(entries)
	p.Line = lineStats(ranked, sc.usage)
	usage := map[string]Usage{}
	limited := map[string]bool{}
	tried := 0
	for _, s := range ranked {
		if free == 0 {
			return
		}
		e := s.e
		if limited[e.Namespace] {
			continue
		}
		share := shareOf(in.Shares, e.Namespace)
		if c := share.MaxPlacing; c > 0 && placing[e.Namespace] >= c {
			p.limit(e.Namespace)
			limited[e.Namespace] = true
			continue
		}
		u, ok := usage[e.Namespace]
		if !ok {
			u = in.Cluster.Usage[e.Namespace]
		}
		d := demand(e)
		if c := share.MaxRunning; c > 0 && u.Allocs > 0 && u.Allocs+d.Allocs > c {
			p.limit(e.Namespace)
			p.WatchCapacity = true
			limited[e.Namespace] = true
			continue
		}
		if res != nil {
			if tried >= backfillDepth {
				return
			}
			tried++
			if !res.admit(d, in.Now) {
				continue
			}
			p.Backfilled = append(p.Backfilled, e)
		}
		p.Release = append(p.Release, e)
		free--
		placing[e.Namespace]++
		u.Res.Add(d.Ask)
		u.Allocs += d.Allocs
		usage[e.Namespace] = u
	}
}

// Topped reports whether an operator topped e (and does not hold it).
func (c Controls) Topped(e *structs.BatchQueueEntry) bool {
	ctl := c.byKey[key(e.Namespace, e.JobID)]
	return ctl != nil && ctl.Top > 0 && !ctl.Held && ctl.EnqueueIndex == e.EnqueueIndex
}

// rankMultifactor is the listing's order of the queued entries in the
// multifactor order, with each one's factors: as the line ranks them now,
// held entries in their place.
func (q *Queue) rankMultifactor(v view, queued []*structs.BatchQueueEntry, c Cluster, shares map[string]structs.BatchQueueShare,
	demand func(*structs.BatchQueueEntry) Demand) ([]*structs.BatchQueueEntry, []structs.BatchQueueFactors) {
	slices.SortFunc(queued, func(a, b *structs.BatchQueueEntry) int { return cmp.Compare(a.EnqueueIndex, b.EnqueueIndex) })
	queued = arrange(queued, v.controls)
	var names []string
	seen := map[string]bool{}
	for _, e := range queued {
		if !seen[e.Namespace] {
			seen[e.Namespace] = true
			names = append(names, e.Namespace)
		}
	}
	c.Folded = q.foldedUsage(v)
	sc := NewScorer(v.settings.Multifactor, time.Now(), c, shares, q.usageResets(v), names, demand)
	in := make([]scored, len(queued))
	for i, e := range queued {
		in[i] = scored{e: e, f: sc.Factors(e), topped: v.controls.Topped(e)}
	}
	ranked := rank(in)
	entries := make([]*structs.BatchQueueEntry, len(ranked))
	factors := make([]structs.BatchQueueFactors, len(ranked))
	for i, s := range ranked {
		entries[i], factors[i] = s.e, s.f
	}
	return entries, factors
}
