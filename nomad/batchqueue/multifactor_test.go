package batchqueue

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

var mfNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// mfe is a queued entry submitted wait before mfNow.
func mfe(ns, id string, prio int, idx uint64, wait time.Duration) *structs.BatchQueueEntry {
	e := qe(ns, id, prio, idx)
	e.EnqueueTime = mfNow.Add(-wait).UnixNano()
	return e
}

func mfConfig(slots int, m structs.BatchQueueMultifactor) structs.BatchQueueConfig {
	return structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderMultifactor, ConcurrentPlacements: slots, Multifactor: m}
}

func releasedIDs(d Decision) []string {
	var out []string
	for _, e := range d.Release {
		out = append(out, e.JobID)
	}
	return out
}

// TestPlan_Multifactor: each factor alone orders the line as its
// definition says, weights trade them off, and caps, holds and tops keep
// working.
func TestPlan_Multifactor(t *testing.T) {
	total := structs.ComparableResources{CPU: 1000, MemoryMB: 1000}
	hour := time.Hour
	// qa ran a 50% job for an hour that ended an hour ago; qb never ran.
	spans := map[string][]Span{"qa": {{Share: 0.5, Start: mfNow.Add(-2 * hour), End: mfNow.Add(-hour)}}}
	sizes := map[string]int64{"big": 900, "small": 100}
	demand := func(e *structs.BatchQueueEntry) Demand { return Demand{Ask: mem(sizes[e.JobID]), Allocs: 1} }
	cases := []struct {
		name    string
		m       structs.BatchQueueMultifactor
		slots   int
		line    []*structs.BatchQueueEntry
		shares  map[string]structs.BatchQueueShare
		topped  []string
		resets  map[string]time.Time
		release []string
		limited []string
	}{
		{name: "priority alone: higher first", m: structs.BatchQueueMultifactor{PriorityWeight: 1}, slots: 2,
			line:    []*structs.BatchQueueEntry{mfe("a", "p10", 10, 1, 0), mfe("a", "p90", 90, 2, 0), mfe("a", "p50", 50, 3, 0)},
			release: []string{"p90", "p50"}},
		{name: "ties by first submission", m: structs.BatchQueueMultifactor{PriorityWeight: 1}, slots: 1,
			line:    []*structs.BatchQueueEntry{mfe("b", "late", 50, 9, 0), mfe("a", "early", 50, 3, 0)},
			release: []string{"early"}},
		{name: "age: a job past MaxAge outranks newer higher-priority ones",
			m: structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 2000, MaxAge: 4 * time.Second}, slots: 1,
			line:    []*structs.BatchQueueEntry{mfe("a", "old10", 10, 1, 5*time.Second), mfe("a", "new90", 90, 2, 500*time.Millisecond)},
			release: []string{"old10"}},
		{name: "age not yet: priority wins",
			m: structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 2000, MaxAge: 4 * time.Second}, slots: 1,
			line:    []*structs.BatchQueueEntry{mfe("a", "old10", 10, 1, time.Second), mfe("a", "new90", 90, 2, 0)},
			release: []string{"new90"}},
		{name: "fair share: the namespace without usage first",
			m: structs.BatchQueueMultifactor{FairShareWeight: 1, UsageHalfLife: hour}, slots: 2,
			line:    []*structs.BatchQueueEntry{mfe("qa", "a1", 50, 1, 0), mfe("qa", "a2", 50, 2, 0), mfe("qb", "b1", 50, 3, 0), mfe("qb", "b2", 50, 4, 0)},
			release: []string{"b1", "b2"}},
		{name: "fair share: a reset forgets the usage",
			m: structs.BatchQueueMultifactor{FairShareWeight: 1, UsageHalfLife: hour}, slots: 1,
			line:    []*structs.BatchQueueEntry{mfe("qa", "a1", 50, 1, 0), mfe("qb", "b1", 50, 3, 0)},
			resets:  map[string]time.Time{"qa": mfNow.Add(-time.Minute)},
			release: []string{"a1"}},
		{name: "job size: small first", m: structs.BatchQueueMultifactor{SizeWeight: 1}, slots: 1,
			line:    []*structs.BatchQueueEntry{mfe("a", "big", 50, 1, 0), mfe("a", "small", 50, 2, 0)},
			release: []string{"small"}},
		{name: "placing cap skips the namespace", m: structs.BatchQueueMultifactor{PriorityWeight: 1}, slots: 2,
			line:    []*structs.BatchQueueEntry{mfe("a", "a1", 90, 1, 0), mfe("a", "a2", 80, 2, 0), mfe("b", "b1", 10, 3, 0)},
			shares:  map[string]structs.BatchQueueShare{"a": {Weight: 1, MaxPlacing: 1}},
			release: []string{"a1", "b1"}, limited: []string{"a"}},
		{name: "a top goes ahead of its namespace", m: structs.BatchQueueMultifactor{PriorityWeight: 1}, slots: 2,
			line:   []*structs.BatchQueueEntry{mfe("a", "a90", 90, 1, 0), mfe("b", "b80", 80, 2, 0), mfe("a", "a10", 10, 3, 0)},
			topped: []string{"a10"}, release: []string{"a10", "b80"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Plan(Input{
				Config: mfConfig(tc.slots, tc.m), Now: mfNow,
				Line:    slices.Values(tc.line),
				Shares:  tc.shares,
				Cluster: Cluster{Total: total, Spans: spans},
				Resets:  tc.resets,
				Demand:  demand,
				Topped:  func(e *structs.BatchQueueEntry) bool { return slices.Contains(tc.topped, e.JobID) },
			})
			must.Eq(t, tc.release, releasedIDs(d))
			var limited []string
			for ns := range d.Limited {
				limited = append(limited, ns)
			}
			must.Eq(t, tc.limited, limited)
		})
	}
}

// TestScorer_Factors: each factor is in [0, 1] before its weight, and
// they add up to the effective priority.
func TestScorer_Factors(t *testing.T) {
	m := structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 2000, FairShareWeight: 500, SizeWeight: 100,
		MaxAge: 4 * time.Second, UsageHalfLife: time.Hour}
	c := Cluster{Total: structs.ComparableResources{CPU: 1000, MemoryMB: 1000},
		Spans: map[string][]Span{"qa": {{Share: 1, Start: mfNow.Add(-time.Hour)}}}}
	demand := func(*structs.BatchQueueEntry) Demand { return Demand{Ask: mem(250)} }
	s := NewScorer(m, mfNow, c, nil, nil, []string{"qa", "qb"}, demand)
	f := s.Factors(mfe("qa", "j", 40, 1, 2*time.Second))
	must.Eq(t, 400, f.Priority)
	must.Eq(t, 1000, f.Age)
	must.Eq(t, 75, f.JobSize)
	// qa holds all usage and half the weight: 2^(-1/0.5) = 0.25.
	must.True(t, math.Abs(f.FairShare-125) < 1e-9, must.Sprint(f.FairShare))
	must.True(t, math.Abs(f.Sum()-1600) < 1e-9)
	must.Eq(t, 500, s.Factors(mfe("qb", "k", 40, 2, 0)).FairShare)
	// Age caps at MaxAge.
	must.Eq(t, 2000, s.Factors(mfe("qa", "old", 40, 3, time.Hour)).Age)
}

// TestDecayedUsage: a span's usage halves every half-life after it ends,
// a running span grows, and a reset cuts what came before it.
func TestDecayedUsage(t *testing.T) {
	h := time.Hour
	ended := []Span{{Share: 1, Start: mfNow.Add(-2 * h), End: mfNow.Add(-h)}}
	u1 := DecayedUsage(ended, mfNow, time.Time{}, h)
	u2 := DecayedUsage(ended, mfNow.Add(h), time.Time{}, h)
	must.True(t, math.Abs(u2-u1/2) < 1e-6, must.Sprintf("%v then %v", u1, u2))
	// An hour at share 1 that ended now: 3600/ln2 * (1 - 1/2) s.
	now := []Span{{Share: 1, Start: mfNow.Add(-h), End: mfNow}}
	must.True(t, math.Abs(DecayedUsage(now, mfNow, time.Time{}, h)-1800/math.Ln2) < 1e-6)
	running := []Span{{Share: 0.5, Start: mfNow.Add(-h)}}
	must.Greater(t, DecayedUsage(running, mfNow, time.Time{}, h), DecayedUsage(running, mfNow.Add(time.Minute), time.Time{}, h))
	must.Eq(t, 0, DecayedUsage(ended, mfNow, mfNow.Add(-time.Minute), h))
}

// BenchmarkPlan_Multifactor is one round of the multifactor order with
// one free slot: it ranks the whole line of n entries over 10 namespaces
// whose usage comes from 1,000 alloc runs.
func BenchmarkPlan_Multifactor(b *testing.B) {
	m := structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 1000, FairShareWeight: 2000, SizeWeight: 100,
		MaxAge: time.Hour, UsageHalfLife: 24 * time.Hour}
	spans := map[string][]Span{}
	for i := range 1000 {
		ns := fmt.Sprintf("ns-%d", i%10)
		start := mfNow.Add(-time.Duration(i) * time.Minute)
		spans[ns] = append(spans[ns], Span{Share: 0.01, Start: start, End: start.Add(30 * time.Minute)})
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			line := make([]*structs.BatchQueueEntry, n)
			for i := range line {
				line[i] = mfe(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("job-%d", i), i%100, uint64(i+1), time.Duration(n-i)*time.Second)
			}
			in := Input{Config: mfConfig(1, m), Now: mfNow, Line: slices.Values(line),
				Cluster: Cluster{Total: structs.ComparableResources{CPU: 100_000, MemoryMB: 100_000}, Spans: spans},
				Demand:  func(*structs.BatchQueueEntry) Demand { return Demand{Ask: mem(100), Allocs: 1} }}
			for b.Loop() {
				if d := Plan(in); len(d.Release) != 1 {
					b.Fatalf("released %d", len(d.Release))
				}
			}
		})
	}
}
