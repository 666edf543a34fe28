package batchqueue

import (
	"slices"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func entry(id string) *structs.BatchQueueEntry {
	return &structs.BatchQueueEntry{Namespace: structs.DefaultNamespace, JobID: id, EvalID: "ev-" + id}
}

func workload(id string, v Verdict) Workload { return Workload{Entry: entry(id), Verdict: v} }

func ids[T any](items []T, id func(T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, id(it))
	}
	return out
}

func TestPlan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	placing := func(d time.Duration) Verdict {
		return Verdict{Status: structs.BatchQueueStatusPlacing, Deadline: t0.Add(d)}
	}
	stalled := Verdict{Status: structs.BatchQueueStatusStalled, Reason: "no new placement for 1m0s (workload_timeout)"}
	constrained := Verdict{Status: structs.BatchQueueStatusConstrained, Reason: `group "g": missing drivers`}
	placed := Verdict{Placed: true, Reason: ReasonPlaced}
	gone := Verdict{Placed: true, Reason: ReasonJobChanged}

	cases := []struct {
		name     string
		slots    int
		released []Workload
		line     []string

		release []string
		done    []string
		why     []string
		placing int
		wake    time.Duration // from t0; 0: none
		pulled  int           // entries taken from the line
	}{
		{name: "empty"},
		{name: "free slots go to the head in order", slots: 2, line: []string{"a", "b", "c"},
			release: []string{"a", "b"}, pulled: 2},
		{name: "more slots than entries", slots: 5, line: []string{"a"},
			release: []string{"a"}, pulled: 1},
		{name: "full: the line is not read", slots: 1, line: []string{"b"},
			released: []Workload{workload("a", placing(time.Minute))},
			placing:  1, wake: time.Minute},
		{name: "placed frees its slot in the same round", slots: 1, line: []string{"b", "c"},
			released: []Workload{workload("a", placed)},
			release:  []string{"b"}, done: []string{"a"}, why: []string{ReasonPlaced}, pulled: 1},
		{name: "stalled and constrained hold no slot", slots: 2, line: []string{"d", "e", "f"},
			released: []Workload{workload("a", stalled), workload("b", constrained), workload("c", placing(2*time.Minute))},
			release:  []string{"d"}, placing: 1, wake: 2 * time.Minute, pulled: 1},
		{name: "wake at the earliest stall deadline", slots: 3,
			released: []Workload{workload("a", placing(3*time.Minute)), workload("b", placing(time.Minute)), workload("c", placing(2*time.Minute))},
			placing:  3, wake: time.Minute},
		{name: "done workloads, each with why", slots: 1,
			released: []Workload{workload("a", placed), workload("b", gone), workload("c", placing(time.Minute))},
			done:     []string{"a", "b"}, why: []string{ReasonPlaced, ReasonJobChanged}, placing: 1, wake: time.Minute},
		{name: "over the limit after a settings change", slots: 1, line: []string{"c"},
			released: []Workload{workload("a", placing(time.Minute)), workload("b", placing(time.Minute))},
			placing:  2, wake: time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pulled := 0
			line := func(yield func(*structs.BatchQueueEntry) bool) {
				for _, id := range tc.line {
					pulled++
					if !yield(entry(id)) {
						return
					}
				}
			}
			d := Plan(Input{
				Config:   structs.BatchQueueConfig{Enabled: true, ConcurrentPlacements: tc.slots},
				Released: tc.released,
				Line:     line,
			})
			jobID := func(e *structs.BatchQueueEntry) string { return e.JobID }
			must.Eq(t, tc.release, ids(d.Release, jobID))
			must.Eq(t, tc.done, ids(d.Done, func(w Workload) string { return w.Entry.JobID }))
			must.Eq(t, tc.why, ids(d.Done, func(w Workload) string { return w.Verdict.Reason }))
			must.Eq(t, tc.placing, d.Placing)
			if tc.wake == 0 {
				must.True(t, d.Wake.IsZero())
			} else {
				must.Eq(t, t0.Add(tc.wake), d.Wake)
			}
			must.Eq(t, tc.pulled, pulled)
		})
	}
}

// Plan reads nothing but its input: the same input gives the same
// decision, and the input is left as it was.
func TestPlan_Pure(t *testing.T) {
	released := []Workload{workload("a", Verdict{Placed: true}), workload("b", Verdict{Status: structs.BatchQueueStatusStalled})}
	before := slices.Clone(released)
	line := slices.Values([]*structs.BatchQueueEntry{entry("c"), entry("d")})
	in := Input{Config: structs.BatchQueueConfig{Enabled: true, ConcurrentPlacements: 1}, Released: released, Line: line}
	first, second := Plan(in), Plan(in)
	must.Eq(t, first, second)
	must.Eq(t, before, released)
}
