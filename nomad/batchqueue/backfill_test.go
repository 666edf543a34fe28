package batchqueue

import (
	"slices"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// waitingHead is a released workload the scheduler could not place for
// want of room: it is missing need.
func waitingHead(status string, need structs.ComparableResources) Workload {
	e := qe("default", "big", 50, 1)
	e.Release = &structs.BatchQueueRelease{Index: 5}
	return Workload{Entry: e, Verdict: Verdict{Status: status, Exhausted: true, Missing: need}}
}

func TestPlan_Backfill(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 1000 MB in all, 700 used: 300 by an alloc ending at +10m, 400 by
	// one ending at +20m. The head misses 800: 300 free now, 600 at
	// +10m, 1000 at +20m, so its shadow time is +20m with 200 spare.
	timed := Cluster{Total: mem(1000), Used: mem(700), Timed: []TimedAlloc{
		{End: t0.Add(10 * time.Minute), Res: mem(300)}, {End: t0.Add(20 * time.Minute), Res: mem(400)}}}
	untimed := Cluster{Total: mem(1000), Used: mem(700)}
	job := func(id string, mb int64, maxRun time.Duration) (*structs.BatchQueueEntry, Demand) {
		return qe("default", id, 50, 0), Demand{Ask: mem(mb), Allocs: 1, MaxRun: maxRun}
	}
	type cand struct {
		id     string
		mb     int64
		maxRun time.Duration
	}
	cases := []struct {
		name     string
		backfill bool
		slots    int
		cluster  Cluster
		head     Workload
		others   []Workload // released besides the head
		line     []cand

		release []string
		start   time.Duration // the reservation's start from t0; -1: none
		why     string
		placing int
	}{
		{name: "ends before the shadow time", backfill: true, slots: 1, cluster: timed,
			head:    waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:    []cand{{"short", 200, 15 * time.Minute}},
			release: []string{"short"}, start: 20 * time.Minute, why: WhyReserved},
		{name: "ends exactly at the shadow time", backfill: true, slots: 1, cluster: timed,
			head:    waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:    []cand{{"edge", 300, 20 * time.Minute}},
			release: []string{"edge"}, start: 20 * time.Minute, why: WhyReserved},
		{name: "outlives the shadow time but fits in the spare room", backfill: true, slots: 2, cluster: timed,
			head:    waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:    []cand{{"long", 150, time.Hour}, {"long2", 100, time.Hour}},
			release: []string{"long"}, start: 20 * time.Minute, why: WhyReserved},
		{name: "a job without max_run_duration never jumps", backfill: true, slots: 1, cluster: timed,
			head:    waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:    []cand{{"untimed", 10, 0}, {"short", 100, time.Minute}},
			release: []string{"short"}, start: 20 * time.Minute, why: WhyReserved},
		{name: "does not fit now", backfill: true, slots: 1, cluster: timed,
			head:  waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:  []cand{{"wide", 400, time.Minute}},
			start: 20 * time.Minute, why: WhyReserved},
		{name: "backfilled jobs share what is free now", backfill: true, slots: 3, cluster: timed,
			head:    waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:    []cand{{"s1", 200, time.Minute}, {"s2", 200, time.Minute}, {"s3", 100, time.Minute}},
			release: []string{"s1", "s3"}, start: 20 * time.Minute, why: WhyReserved},
		{name: "a stalled head keeps its reservation", backfill: true, slots: 1, cluster: timed,
			head:    waitingHead(structs.BatchQueueStatusStalled, mem(800)),
			line:    []cand{{"untimed", 10, 0}, {"short", 100, time.Minute}},
			release: []string{"short"}, start: 20 * time.Minute, why: WhyReserved},
		{name: "no deadline frees the room: the head keeps its slot", backfill: true, slots: 1, cluster: untimed,
			head:  waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:  []cand{{"short", 100, time.Minute}},
			start: 0, why: WhyNoDeadline, placing: 1},
		{name: "no deadline, more slots: the line moves as without backfill", backfill: true, slots: 2, cluster: untimed,
			head:    waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:    []cand{{"untimed", 100, 0}},
			release: []string{"untimed"}, start: 0, why: WhyNoDeadline, placing: 1},
		{name: "a released workload not yet placed is not free room", backfill: true, slots: 3, cluster: timed,
			head: waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			others: []Workload{{Entry: qe("default", "placing", 50, 2), Verdict: Verdict{Status: structs.BatchQueueStatusPlacing,
				Missing: mem(200), MaxRun: time.Minute}}},
			line:    []cand{{"wide", 150, time.Minute}, {"fits", 100, time.Minute}},
			release: []string{"fits"}, start: 20 * time.Minute, why: WhyReserved, placing: 1},
		{name: "backfill off: the waiting head holds its slot", backfill: false, slots: 1, cluster: timed,
			head:  waitingHead(structs.BatchQueueStatusPlacing, mem(800)),
			line:  []cand{{"short", 100, time.Minute}},
			start: -1, placing: 1},
		{name: "a head still placing reserves nothing", backfill: true, slots: 2, cluster: timed,
			head:    Workload{Entry: qe("default", "big", 50, 1), Verdict: Verdict{Status: structs.BatchQueueStatusPlacing}},
			line:    []cand{{"untimed", 100, 0}},
			release: []string{"untimed"}, start: -1, placing: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			demands := map[string]Demand{}
			var line []*structs.BatchQueueEntry
			for _, c := range tc.line {
				e, d := job(c.id, c.mb, c.maxRun)
				demands[c.id] = d
				line = append(line, e)
			}
			in := Input{
				Config: structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderPriority,
					ConcurrentPlacements: tc.slots, Backfill: tc.backfill},
				Now: t0, Released: append([]Workload{tc.head}, tc.others...), Line: slices.Values(line), Cluster: tc.cluster,
				Demand: func(e *structs.BatchQueueEntry) Demand { return demands[e.JobID] },
			}
			d := Plan(in)
			jobID := func(e *structs.BatchQueueEntry) string { return e.JobID }
			must.Eq(t, tc.release, ids(d.Release, jobID))
			must.Eq(t, tc.placing, d.Placing)
			if tc.start < 0 {
				must.Nil(t, d.Reservation)
				return
			}
			must.NotNil(t, d.Reservation)
			must.Eq(t, tc.why, d.Reservation.Why)
			if tc.why == WhyReserved {
				must.Eq(t, t0.Add(tc.start), d.Reservation.Start)
				must.Eq(t, tc.release, ids(d.Backfilled, jobID))
			} else {
				must.True(t, d.Reservation.Start.IsZero())
				must.SliceEmpty(t, d.Backfilled)
			}
		})
	}
}

// No backfilled job delays the head: with what backfill released running
// (each until its max_run_duration), the head's reserved start is the
// one it had without backfill.
func TestPlan_BackfillNeverDelaysTheHead(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cluster := Cluster{Total: mem(1000), Used: mem(700), Timed: []TimedAlloc{
		{End: t0.Add(10 * time.Minute), Res: mem(300)}, {End: t0.Add(20 * time.Minute), Res: mem(400)}}}
	need := mem(800)
	cases := []struct {
		name  string
		asks  []int64
		runs  []time.Duration
		count int // how many backfill
	}{
		{"short ones", []int64{100, 100, 100}, []time.Duration{5 * time.Minute, 19 * time.Minute, 20 * time.Minute}, 3},
		{"long ones in the spare room", []int64{150, 100, 50}, []time.Duration{time.Hour, time.Hour, time.Hour}, 2},
		{"mixed", []int64{200, 50, 50}, []time.Duration{10 * time.Minute, 2 * time.Hour, 3 * time.Hour}, 3},
		{"too long and too wide", []int64{250, 350}, []time.Duration{21 * time.Minute, time.Minute}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			without := reserve(cluster, need, t0).start
			demands := map[string]Demand{}
			var line []*structs.BatchQueueEntry
			for i := range tc.asks {
				e := qe("default", string(rune('a'+i)), 50, uint64(i+10))
				demands[e.JobID] = Demand{Ask: mem(tc.asks[i]), Allocs: 1, MaxRun: tc.runs[i]}
				line = append(line, e)
			}
			d := Plan(Input{
				Config: structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFIFO, ConcurrentPlacements: 10, Backfill: true},
				Now:    t0, Released: []Workload{waitingHead(structs.BatchQueueStatusPlacing, need)},
				Line: slices.Values(line), Cluster: cluster,
				Demand: func(e *structs.BatchQueueEntry) Demand { return demands[e.JobID] },
			})
			must.Len(t, tc.count, d.Backfilled)
			after := cluster
			after.Timed = slices.Clone(cluster.Timed)
			for _, e := range d.Backfilled {
				dm := demands[e.JobID]
				after.Used.Add(dm.Ask)
				after.Timed = append(after.Timed, TimedAlloc{End: t0.Add(dm.MaxRun), Res: dm.Ask})
			}
			slices.SortFunc(after.Timed, func(a, b TimedAlloc) int { return a.End.Compare(b.End) })
			must.Eq(t, without, reserve(after, need, t0).start)
		})
	}
}
