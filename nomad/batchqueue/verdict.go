package batchqueue

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Verdict is the status of a released workload computed from state.
type Verdict struct {
	// Status is placing, stalled or constrained; it is empty when Placed.
	Status string
	// Reason says why a workload is stalled, constrained or done.
	Reason string

	// Placed means the workload is done: every wanted alloc of the
	// released version was placed once, or the job is gone.
	Placed bool

	// Deadline is when a placing workload stalls (zero otherwise).
	Deadline time.Time

	// Exhausted means the scheduler's newest completed eval since the
	// release failed a group for want of capacity (not infeasibility):
	// the workload waits for room, and backfill may reserve it.
	Exhausted bool
	// Missing is what the allocs still to place ask for.
	Missing structs.ComparableResources
	// MaxRun is the job's longest max_run_duration, 0 when a group has
	// none (see DemandOf).
	MaxRun time.Duration
}

// Why a released workload is done.
const (
	ReasonPlaced         = "every wanted allocation was placed"
	ReasonNothingToPlace = "the scheduler has nothing left to place"
	ReasonJobChanged     = "job stopped, purged or registered with a new version"
)

// Judge computes a released entry's verdict from the job, its evals and
// its allocs (all of them, terminal included) at time now. It is a pure
// function of Raft state and the clock, so every leader reaches the same
// verdict.
func Judge(e *structs.BatchQueueEntry, job *structs.Job, evals []*structs.Evaluation, allocs []*structs.Allocation, now time.Time, timeout time.Duration) Verdict {
	rel := e.Release
	if job == nil || job.Stop || job.Version != rel.JobVersion {
		return Verdict{Placed: true, Reason: ReasonJobChanged}
	}
	// Distinct alloc names per group: replacements and reschedules of an
	// already placed alloc carry the same name, so they count once, at
	// the first placement of the name.
	placed := make(map[string]map[string]int64)
	for _, a := range allocs {
		if a.Job == nil || a.Job.Version != rel.JobVersion || a.CreateIndex < rel.Index {
			continue
		}
		names := placed[a.TaskGroup]
		if names == nil {
			names = make(map[string]int64)
			placed[a.TaskGroup] = names
		}
		if t, ok := names[a.Name]; !ok || a.CreateTime < t {
			names[a.Name] = a.CreateTime
		}
	}
	done := true
	var created []int64
	var missing structs.ComparableResources
	for _, tg := range job.TaskGroups {
		if n := tg.Count - len(placed[tg.Name]); n > 0 {
			done = false
			ask := tg.Ask()
			missing.Add(structs.ComparableResources{CPU: ask.CPU * int64(n), MemoryMB: ask.MemoryMB * int64(n), DiskMB: ask.DiskMB * int64(n)})
		}
		for _, t := range placed[tg.Name] {
			created = append(created, t)
		}
	}
	if done {
		return Verdict{Placed: true, Reason: ReasonPlaced}
	}
	if schedulerDone(rel, evals) {
		return Verdict{Placed: true, Reason: ReasonNothingToPlace}
	}
	if reason := constrained(e, evals); reason != "" {
		return Verdict{Status: structs.BatchQueueStatusConstrained, Reason: reason}
	}
	// Stalled is for good: a workload that once went workload_timeout
	// without a new placement stays out of the slots until it is placed,
	// even if capacity later frees for a part of it. Walking the gaps
	// between the release and each placement lets any leader reach the
	// same verdict from Raft state.
	slices.Sort(created)
	last := rel.Time
	exhausted := exhausted(rel, evals)
	stalled := func() Verdict {
		return Verdict{Status: structs.BatchQueueStatusStalled,
			Reason:    fmt.Sprintf("no new placement for %s (workload_timeout)", timeout),
			Exhausted: exhausted, Missing: missing, MaxRun: DemandOf(job).MaxRun}
	}
	for _, c := range created {
		if c-last >= int64(timeout) {
			return stalled()
		}
		last = max(last, c)
	}
	deadline := time.Unix(0, last).Add(timeout)
	if !now.Before(deadline) {
		return stalled()
	}
	return Verdict{Status: structs.BatchQueueStatusPlacing, Deadline: deadline, Exhausted: exhausted, Missing: missing,
		MaxRun: DemandOf(job).MaxRun}
}

// exhausted reports whether the newest eval completed since the release
// failed a group for want of capacity: the scheduler's feasibility and
// bin-packing over its snapshot found no room, which is what a
// reservation needs, not a guess from sums.
func exhausted(rel *structs.BatchQueueRelease, evals []*structs.Evaluation) bool {
	var latest *structs.Evaluation
	for _, ev := range evals {
		if ev.ModifyIndex >= rel.Index && ev.Status == structs.EvalStatusComplete &&
			(latest == nil || ev.ModifyIndex > latest.ModifyIndex) {
			latest = ev
		}
	}
	if latest == nil {
		return false
	}
	for _, m := range latest.FailedTGAllocs {
		if m != nil && !m.Infeasible {
			return true
		}
	}
	return false
}

// schedulerDone reports whether the scheduler has nothing left to place
// for the workload: no eval written since the release is pending or
// blocked, and the newest one it completed failed no group. That covers a
// job whose wanted allocs were placed before (a re-run of a finished
// batch job wants nothing new) as well as one placed now.
func schedulerDone(rel *structs.BatchQueueRelease, evals []*structs.Evaluation) bool {
	var latest *structs.Evaluation
	for _, ev := range evals {
		if ev.ModifyIndex < rel.Index {
			continue
		}
		switch ev.Status {
		case structs.EvalStatusPending, structs.EvalStatusBlocked:
			return false
		case structs.EvalStatusComplete:
			if latest == nil || ev.ModifyIndex > latest.ModifyIndex {
				latest = ev
			}
		}
	}
	return latest != nil && len(latest.FailedTGAllocs) == 0
}

// constrained returns the scheduler's infeasibility reasons from the
// newest eval since the release that found a group infeasible, or "".
// Once constrained, a workload stays so until it is placed: a later eval
// that fails for want of capacity does not give it a slot back.
func constrained(e *structs.BatchQueueEntry, evals []*structs.Evaluation) string {
	var latest *structs.Evaluation
	var reasons []string
	for _, ev := range evals {
		if ev.ModifyIndex < e.Release.Index || (latest != nil && ev.ModifyIndex <= latest.ModifyIndex) {
			continue
		}
		var r []string
		for tg, m := range ev.FailedTGAllocs {
			if m != nil && m.Infeasible {
				r = append(r, fmt.Sprintf("group %q: %s", tg, m.InfeasibleReason))
			}
		}
		if len(r) > 0 {
			latest, reasons = ev, r
		}
	}
	sort.Strings(reasons)
	return strings.Join(reasons, "; ")
}
