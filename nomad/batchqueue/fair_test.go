package batchqueue

import (
	"iter"
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// qe is a queued entry of namespace ns at Raft index idx.
func qe(ns, id string, prio int, idx uint64) *structs.BatchQueueEntry {
	return &structs.BatchQueueEntry{Namespace: ns, JobID: id, EvalID: "ev-" + id, Priority: prio, EnqueueIndex: idx}
}

func mem(mb int64) structs.ComparableResources { return structs.ComparableResources{MemoryMB: mb} }

// nsLines splits entries by namespace, each line in the order given.
func nsLines(entries []*structs.BatchQueueEntry) map[string]iter.Seq[*structs.BatchQueueEntry] {
	split := map[string][]*structs.BatchQueueEntry{}
	for _, e := range entries {
		split[e.Namespace] = append(split[e.Namespace], e)
	}
	out := map[string]iter.Seq[*structs.BatchQueueEntry]{}
	for ns, es := range split {
		out[ns] = slices.Values(es)
	}
	return out
}

func TestPlan_Fair(t *testing.T) {
	total := structs.ComparableResources{CPU: 1000, MemoryMB: 1000}
	each := func(*structs.BatchQueueEntry) Demand { return Demand{Ask: mem(100), Allocs: 1} }
	placingIn := func(ns, id string) Workload {
		return Workload{Entry: qe(ns, id, 50, 1), Verdict: Verdict{Status: structs.BatchQueueStatusPlacing}}
	}
	cases := []struct {
		name     string
		slots    int
		line     []*structs.BatchQueueEntry
		usage    map[string]Usage
		shares   map[string]structs.BatchQueueShare
		released []Workload

		release []string
		limited []string
		watch   bool
	}{
		{name: "smallest share first", slots: 1,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("b", "b1", 50, 2)},
			usage:   map[string]Usage{"a": {Res: mem(300), Allocs: 3}, "b": {Res: mem(100), Allocs: 1}},
			release: []string{"b1"}},
		{name: "weight divides the share", slots: 1,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("b", "b1", 50, 2)},
			usage:   map[string]Usage{"a": {Res: mem(300)}, "b": {Res: mem(200)}},
			shares:  map[string]structs.BatchQueueShare{"a": {Weight: 3}},
			release: []string{"a1"}},
		{name: "dominant resource counts", slots: 1,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("b", "b1", 50, 2)},
			usage:   map[string]Usage{"a": {Res: structs.ComparableResources{CPU: 500, MemoryMB: 10}}, "b": {Res: mem(300)}},
			release: []string{"b1"}},
		{name: "tie: higher priority head first", slots: 1,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("b", "b1", 70, 2)},
			release: []string{"b1"}},
		{name: "tie: first submission", slots: 1,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 5), qe("b", "b1", 50, 3)},
			release: []string{"b1"}},
		{name: "one round interleaves by what it released", slots: 4,
			line: []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("a", "a2", 50, 2), qe("a", "a3", 50, 3),
				qe("b", "b1", 50, 10), qe("b", "b2", 50, 11)},
			release: []string{"a1", "b1", "a2", "b2"}},
		{name: "weights 3:1 in one round", slots: 4,
			line: []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("a", "a2", 50, 2), qe("a", "a3", 50, 3),
				qe("a", "a4", 50, 4), qe("b", "b1", 50, 10), qe("b", "b2", 50, 11)},
			shares:  map[string]structs.BatchQueueShare{"a": {Weight: 3}},
			release: []string{"a1", "b1", "a2", "a3"}},
		{name: "placing cap skips the namespace", slots: 3,
			line:     []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("a", "a2", 50, 2), qe("b", "b1", 50, 10)},
			shares:   map[string]structs.BatchQueueShare{"a": {Weight: 1, MaxPlacing: 1}},
			released: []Workload{placingIn("a", "a0")},
			release:  []string{"b1"}, limited: []string{"a"}},
		{name: "running cap holds the namespace until allocs end", slots: 2,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("b", "b1", 50, 10)},
			usage:   map[string]Usage{"a": {Allocs: 2}, "b": {Res: mem(500), Allocs: 5}},
			shares:  map[string]structs.BatchQueueShare{"a": {Weight: 1, MaxRunning: 2}},
			release: []string{"b1"}, limited: []string{"a"}, watch: true},
		{name: "a job over the running cap runs alone", slots: 1,
			line:    []*structs.BatchQueueEntry{qe("a", "a1", 50, 1)},
			shares:  map[string]structs.BatchQueueShare{"a": {Weight: 1, MaxRunning: 1}},
			release: []string{"a1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Plan(Input{
				Config:   structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFair, ConcurrentPlacements: tc.slots},
				Released: tc.released,
				Lines:    nsLines(tc.line),
				Shares:   tc.shares,
				Cluster:  Cluster{Total: total, Usage: tc.usage},
				Demand:   each,
			})
			must.Eq(t, tc.release, ids(d.Release, func(e *structs.BatchQueueEntry) string { return e.JobID }))
			var limited []string
			for ns := range d.Limited {
				limited = append(limited, ns)
			}
			slices.Sort(limited)
			must.Eq(t, tc.limited, limited)
			must.Eq(t, tc.watch, d.WatchCapacity)
		})
	}
}

// Under saturation, the fair order gives each namespace placements in
// proportion to its weight. The cluster holds 8 equal jobs that all run
// for 8 steps; each step the oldest ends and one round releases one job,
// placed at once.
func TestPlan_FairConvergesToWeights(t *testing.T) {
	cases := []struct {
		name    string
		weights map[string]float64
		want    map[string]float64
	}{
		{"3:1", map[string]float64{"a": 3, "b": 1}, map[string]float64{"a": 0.75, "b": 0.25}},
		{"1:1", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": 0.5, "b": 0.5}},
		{"2:1:1", map[string]float64{"a": 2, "b": 1, "c": 1}, map[string]float64{"a": 0.5, "b": 0.25, "c": 0.25}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const slotsInCluster, steps, warmup = 8, 2000, 100
			total := structs.ComparableResources{CPU: 8000, MemoryMB: 8000}
			ask := Demand{Ask: structs.ComparableResources{CPU: 1000, MemoryMB: 1000}, Allocs: 1}
			shares := map[string]structs.BatchQueueShare{}
			queued := map[string][]*structs.BatchQueueEntry{}
			idx := uint64(0)
			for ns, w := range tc.weights {
				shares[ns] = structs.BatchQueueShare{Weight: w}
			}
			// Every namespace always has more waiting than can run; the
			// first namespace floods first.
			for _, ns := range []string{"a", "b", "c"} {
				if _, ok := tc.weights[ns]; !ok {
					continue
				}
				for range steps {
					idx++
					queued[ns] = append(queued[ns], qe(ns, ns, 50, idx))
				}
			}
			var running []string // namespaces of running jobs, oldest first
			counts := map[string]int{}
			for step := range steps {
				if len(running) == slotsInCluster {
					running = running[1:]
				}
				usage := map[string]Usage{}
				for _, ns := range running {
					u := usage[ns]
					u.Res.Add(ask.Ask)
					u.Allocs++
					usage[ns] = u
				}
				lines := map[string]iter.Seq[*structs.BatchQueueEntry]{}
				for ns, es := range queued {
					lines[ns] = slices.Values(es)
				}
				d := Plan(Input{
					Config: structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFair, ConcurrentPlacements: 1},
					Lines:  lines, Shares: shares, Cluster: Cluster{Total: total, Usage: usage},
					Demand: func(*structs.BatchQueueEntry) Demand { return ask },
				})
				must.Len(t, 1, d.Release)
				ns := d.Release[0].Namespace
				queued[ns] = queued[ns][1:]
				running = append(running, ns)
				if step >= warmup {
					counts[ns]++
				}
			}
			for ns, want := range tc.want {
				got := float64(counts[ns]) / float64(steps-warmup)
				must.Between(t, want-0.05, got, want+0.05, must.Sprintf("namespace %s placed %.3f of jobs", ns, got))
			}
		})
	}
}

// Every leader computes the same order: the decision does not depend on
// the order in which the namespaces' lines are handed over.
func TestPlan_FairIsDeterministic(t *testing.T) {
	line := []*structs.BatchQueueEntry{qe("a", "a1", 50, 1), qe("b", "b1", 50, 1), qe("c", "c1", 50, 1)}
	in := Input{
		Config:  structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFair, ConcurrentPlacements: 3},
		Lines:   nsLines(line),
		Cluster: Cluster{Total: mem(1000)},
	}
	first := ids(Plan(in).Release, func(e *structs.BatchQueueEntry) string { return e.JobID })
	for range 20 {
		in.Lines = nsLines(line)
		must.Eq(t, first, ids(Plan(in).Release, func(e *structs.BatchQueueEntry) string { return e.JobID }))
	}
	must.Eq(t, []string{"a1", "b1", "c1"}, first)
}
