package batchqueue

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Span is one batch alloc's run as the multifactor order's decayed usage
// counts it: its dominant share of the cluster from Start to End. A zero
// End means it still runs.
//
// Spans are derived from the allocs in Raft state alone (their tasks'
// start and finish times and their resources), so every server computes
// the same usage at the same instant and a new leader orders the line as
// the old one did; no usage record needs writing as allocs run. When the
// garbage collector deletes an alloc, the state store folds its span
// into the namespace's BatchQueueFoldedUsage in the same Raft apply, so
// it keeps counting.
type Span struct {
	Share      float64
	Start, End time.Time
}

// spanOf is a batch alloc's run, false when no task of it started.
func spanOf(a *structs.Allocation, total structs.ComparableResources) (Span, bool) {
	start, end, ok := a.BatchRun()
	if !ok {
		return Span{}, false
	}
	return Span{Share: Share(a.Usage(), total, 1), Start: start, End: end}, true
}

// DecayedUsage is the usage of spans at now, in share-seconds: each
// second a span ran counts 2^(-age/halfLife), age being how long ago the
// second was. A span's part from since on counts, the rest does not (an
// operator's reset); the zero since counts all. halfLife must be above 0.
func DecayedUsage(spans []Span, now, since time.Time, halfLife time.Duration) float64 {
	var u float64
	for _, s := range spans {
		u += structs.DecayedShareSeconds(s.Share, later(s.Start, since), s.End, now, halfLife)
	}
	return u
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// Usages computes every namespace's decayed usage and fair-share factor
// at now: namespaces in shares (every namespace in state), any with
// spans or folded usage, and extra (those with queued entries), sorted
// by name. A namespace's usage is that of its allocs' spans plus the
// folded usage of its garbage-collected allocs, decayed to now. resets
// are the namespaces' usage reset times.
func Usages(spans map[string][]Span, folded map[string]structs.BatchQueueFoldedUsage,
	shares map[string]structs.BatchQueueShare, resets map[string]time.Time,
	extra []string, now time.Time, halfLife time.Duration) []*structs.BatchQueueNamespaceUsage {
	names := map[string]bool{}
	for ns := range shares {
		names[ns] = true
	}
	for ns := range spans {
		names[ns] = true
	}
	for ns := range folded {
		names[ns] = true
	}
	for _, ns := range extra {
		names[ns] = true
	}
	out := make([]*structs.BatchQueueNamespaceUsage, 0, len(names))
	var totalU, totalW float64
	for ns := range names {
		u := &structs.BatchQueueNamespaceUsage{Namespace: ns, Weight: shareOf(shares, ns).Weight}
		if t, ok := resets[ns]; ok {
			u.ResetTime = t.UnixNano()
		}
		if halfLife > 0 {
			u.Usage = DecayedUsage(spans[ns], now, resets[ns], halfLife) + folded[ns].DecayedTo(now, halfLife)
		}
		totalU += u.Usage
		totalW += u.Weight
		out = append(out, u)
	}
	for _, u := range out {
		if totalU > 0 {
			u.NormalizedUsage = u.Usage / totalU
		}
		u.NormalizedShare = u.Weight / totalW
		u.FairShare = math.Exp2(-u.NormalizedUsage / u.NormalizedShare)
	}
	slices.SortFunc(out, func(a, b *structs.BatchQueueNamespaceUsage) int { return cmp.Compare(a.Namespace, b.Namespace) })
	return out
}

// addSpan counts a batch alloc's run in c's spans.
func (c *Cluster) addSpan(a *structs.Allocation) {
	s, ok := spanOf(a, c.Total)
	if !ok {
		return
	}
	if c.Spans == nil {
		c.Spans = map[string][]Span{}
	}
	c.Spans[a.Namespace] = append(c.Spans[a.Namespace], s)
}

// usageResets reads the namespaces' usage reset times from the view's
// store; none when the read fails, which the listing logs.
func (q *Queue) usageResets(v view) map[string]time.Time {
	resets, err := v.store.BatchQueueUsageResets(nil)
	if err != nil {
		q.cfg.Logger.Error("batch queue: reading usage resets failed", "error", err)
	}
	return resets
}

// foldedUsage reads the namespaces' folded usage of garbage-collected
// allocs from the view's store; none when the read fails, which it logs.
func (q *Queue) foldedUsage(v view) map[string]structs.BatchQueueFoldedUsage {
	folded, err := v.store.BatchQueueUsageFolded(nil)
	if err != nil {
		q.cfg.Logger.Error("batch queue: reading folded usage failed", "error", err)
	}
	return folded
}

// Usage returns every namespace's decayed usage and fair-share factor
// now, under the configured UsageHalfLife, as the multifactor order
// weighs them. It is computed from Raft state alone, so any leader
// answers the same.
func (q *Queue) Usage() []*structs.BatchQueueNamespaceUsage {
	v := q.readerView()
	if v.store == nil {
		return []*structs.BatchQueueNamespaceUsage{}
	}
	cluster, shares := q.readCluster(v)
	var queued []string
	seen := map[string]bool{}
	err := v.store.BatchQueueEach(func(e *structs.BatchQueueEntry) {
		if !e.Released() && !seen[e.Namespace] {
			seen[e.Namespace] = true
			queued = append(queued, e.Namespace)
		}
	})
	if err != nil {
		q.cfg.Logger.Error("batch queue usage: reading the queue failed", "error", err)
	}
	return Usages(cluster.Spans, q.foldedUsage(v), shares, q.usageResets(v), queued, time.Now(), v.settings.Multifactor.UsageHalfLife)
}
