package structs

import (
	"math"
	"time"
)

// BatchQueueFoldedUsage is the decayed usage (share-seconds) of a
// namespace's batch allocs that the garbage collector deleted, as it
// stood at At (unix nanoseconds, the latest end of the runs folded in).
// Keeping it in Raft state means a GC does not lower a namespace's
// usage: its value at any later time is Usage decayed from At.
type BatchQueueFoldedUsage struct {
	Usage float64
	At    int64
}

// DecayedTo is the folded usage at now under halfLife: Usage halved for
// every halfLife since At. A now before At (a clock behind the client
// that reported the run's end) decays nothing.
func (f BatchQueueFoldedUsage) DecayedTo(now time.Time, halfLife time.Duration) float64 {
	if f.Usage <= 0 || halfLife <= 0 {
		return 0
	}
	age := now.Sub(time.Unix(0, f.At))
	if age <= 0 {
		return f.Usage
	}
	return f.Usage * math.Exp2(-age.Seconds()/halfLife.Seconds())
}

// Add folds in a run of the given dominant share from start to end:
// both are brought to the later of At and end, so the fold needs no
// clock, only the run's own times, and every server computes the same.
func (f BatchQueueFoldedUsage) Add(share float64, start, end time.Time, halfLife time.Duration) BatchQueueFoldedUsage {
	if !end.After(start) || share <= 0 || halfLife <= 0 {
		return f
	}
	at := time.Unix(0, max(f.At, end.UnixNano()))
	return BatchQueueFoldedUsage{
		Usage: f.DecayedTo(at, halfLife) + DecayedShareSeconds(share, start, end, at, halfLife),
		At:    at.UnixNano(),
	}
}

// DecayedShareSeconds is a run's usage at now, in share-seconds: each
// second from start to end (end capped at now) counts share times
// 2^(-age/halfLife), age being how long before now the second was.
func DecayedShareSeconds(share float64, start, end, now time.Time, halfLife time.Duration) float64 {
	if end.IsZero() || end.After(now) {
		end = now
	}
	if !end.After(start) || share <= 0 || halfLife <= 0 {
		return 0
	}
	h := halfLife.Seconds()
	// The integral of 2^(-(now-t)/h) from start to end.
	ageStart, ageEnd := now.Sub(start).Seconds(), now.Sub(end).Seconds()
	return share * h / math.Ln2 * (math.Exp2(-ageEnd/h) - math.Exp2(-ageStart/h))
}

// DominantShare is the larger of u's CPU and memory parts of total.
func DominantShare(u, total ComparableResources) float64 {
	var s float64
	if total.CPU > 0 {
		s = float64(u.CPU) / float64(total.CPU)
	}
	if total.MemoryMB > 0 {
		s = max(s, float64(u.MemoryMB)/float64(total.MemoryMB))
	}
	return s
}

// BatchRun is when a batch alloc ran, from its tasks' start and finish
// times: End is zero while it runs, and an alloc that ended without a
// finish time (lost) ends at its last modification. ok is false when no
// task of it started.
func (a *Allocation) BatchRun() (start, end time.Time, ok bool) {
	for _, ts := range a.TaskStates {
		if ts == nil || ts.StartedAt.IsZero() {
			continue
		}
		if start.IsZero() || ts.StartedAt.Before(start) {
			start = ts.StartedAt
		}
		if ts.FinishedAt.After(end) {
			end = ts.FinishedAt
		}
	}
	if start.IsZero() {
		return start, end, false
	}
	if !a.ClientTerminalStatus() {
		end = time.Time{} // still running: a task that restarted has an old FinishedAt
	} else if end.IsZero() || end.Before(start) {
		end = time.Unix(0, a.ModifyTime)
	}
	return start, end, true
}
