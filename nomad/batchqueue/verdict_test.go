package batchqueue

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const timeout = time.Minute
	job := batchJob("a", 50, 2)
	job.Version = 1
	stopped := job.Copy()
	stopped.Stop = true
	newer := job.Copy()
	newer.Version = 2
	older := job.Copy()
	older.Version = 0
	e := entry("a")
	e.Release = &structs.BatchQueueRelease{Index: 10, Time: t0.UnixNano(), JobVersion: 1}

	alloc := func(name string, index uint64, at time.Duration) *structs.Allocation {
		return &structs.Allocation{Name: "a.g[" + name + "]", TaskGroup: "g", Job: job, CreateIndex: index, CreateTime: t0.Add(at).UnixNano()}
	}
	oldAlloc := alloc("1", 11, time.Second)
	oldAlloc.Job = older
	eval := func(status string, index uint64, failed map[string]*structs.AllocMetric) *structs.Evaluation {
		return &structs.Evaluation{Status: status, ModifyIndex: index, FailedTGAllocs: failed}
	}
	infeasible := func(reason string) *structs.AllocMetric {
		return &structs.AllocMetric{Infeasible: true, InfeasibleReason: reason}
	}
	exhausted := map[string]*structs.AllocMetric{"g": {NodesExhausted: 1}}

	cases := []struct {
		name   string
		job    *structs.Job
		evals  []*structs.Evaluation
		allocs []*structs.Allocation
		now    time.Duration // after the release

		placed   bool
		status   string
		reason   string
		deadline time.Duration // after the release; 0: none
	}{
		{name: "just released", job: job, now: 0,
			status: structs.BatchQueueStatusPlacing, deadline: timeout},
		{name: "job purged", job: nil, placed: true, reason: ReasonJobChanged},
		{name: "job stopped", job: stopped, placed: true, reason: ReasonJobChanged},
		{name: "new version registered", job: newer, placed: true, reason: ReasonJobChanged},
		{name: "every wanted alloc placed", job: job, now: 5 * time.Second,
			allocs: []*structs.Allocation{alloc("0", 11, time.Second), alloc("1", 12, 2*time.Second)},
			placed: true, reason: ReasonPlaced},
		{name: "half placed: the clock starts at the placement", job: job, now: 30 * time.Second,
			allocs: []*structs.Allocation{alloc("0", 11, 20*time.Second)},
			status: structs.BatchQueueStatusPlacing, deadline: 20*time.Second + timeout},
		{name: "a replacement counts once and does not move the clock", job: job, now: 30 * time.Second,
			allocs: []*structs.Allocation{alloc("0", 11, 10*time.Second), alloc("0", 12, 25*time.Second)},
			status: structs.BatchQueueStatusPlacing, deadline: 10*time.Second + timeout},
		{name: "allocs of another version or from before the release do not count", job: job, now: 30 * time.Second,
			allocs: []*structs.Allocation{alloc("0", 9, -time.Second), oldAlloc},
			status: structs.BatchQueueStatusPlacing, deadline: timeout},
		{name: "scheduler has nothing to place", job: job, now: time.Second,
			evals:  []*structs.Evaluation{eval(structs.EvalStatusComplete, 11, nil)},
			placed: true, reason: ReasonNothingToPlace},
		{name: "an eval completed before the release is not the scheduler's answer", job: job, now: time.Second,
			evals:  []*structs.Evaluation{eval(structs.EvalStatusComplete, 9, nil)},
			status: structs.BatchQueueStatusPlacing, deadline: timeout},
		{name: "a pending follow-up means more to place", job: job, now: time.Second,
			evals:  []*structs.Evaluation{eval(structs.EvalStatusComplete, 11, nil), eval(structs.EvalStatusPending, 12, nil)},
			status: structs.BatchQueueStatusPlacing, deadline: timeout},
		{name: "infeasible groups: constrained, reasons sorted", job: job, now: time.Second,
			evals: []*structs.Evaluation{eval(structs.EvalStatusComplete, 11, map[string]*structs.AllocMetric{
				"z": infeasible("missing drivers"), "b": infeasible("node pool empty"), "c": {NodesExhausted: 2}})},
			status: structs.BatchQueueStatusConstrained, reason: `group "b": node pool empty; group "z": missing drivers`},
		{name: "constrained stays so after a capacity failure", job: job, now: time.Second,
			evals: []*structs.Evaluation{
				eval(structs.EvalStatusComplete, 11, map[string]*structs.AllocMetric{"g": infeasible("missing drivers")}),
				eval(structs.EvalStatusBlocked, 13, exhausted)},
			status: structs.BatchQueueStatusConstrained, reason: `group "g": missing drivers`},
		{name: "capacity failure alone keeps placing", job: job, now: time.Second,
			evals:  []*structs.Evaluation{eval(structs.EvalStatusBlocked, 11, exhausted)},
			status: structs.BatchQueueStatusPlacing, deadline: timeout},
		{name: "no placement for workload_timeout: stalled", job: job, now: timeout,
			status: structs.BatchQueueStatusStalled, reason: "no new placement for 1m0s (workload_timeout)"},
		{name: "a past gap of workload_timeout stalls for good", job: job, now: 70 * time.Second,
			allocs: []*structs.Allocation{alloc("0", 11, 65*time.Second)},
			status: structs.BatchQueueStatusStalled, reason: "no new placement for 1m0s (workload_timeout)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(e, tc.job, tc.evals, tc.allocs, t0.Add(tc.now), timeout)
			must.Eq(t, tc.placed, v.Placed)
			must.Eq(t, tc.status, v.Status)
			must.Eq(t, tc.reason, v.Reason)
			if tc.deadline == 0 {
				must.True(t, v.Deadline.IsZero())
			} else {
				must.Eq(t, t0.Add(tc.deadline), v.Deadline)
			}
		})
	}
}
