package scheduler

import (
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Default reschedule policies, used when neither the group nor the job
// sets one. They match Nomad's.
var (
	defaultBatchReschedule = structs.ReschedulePolicy{
		Attempts:      1,
		Interval:      24 * time.Hour,
		Delay:         5 * time.Second,
		DelayFunction: structs.RescheduleDelayConstant,
	}
	defaultServiceReschedule = structs.ReschedulePolicy{
		Delay:         30 * time.Second,
		DelayFunction: structs.RescheduleDelayExponential,
		MaxDelay:      time.Hour,
		Unlimited:     true,
	}
)

// reschedulePolicy returns the policy that governs a group's failed
// allocations.
func reschedulePolicy(job *structs.Job, tg *structs.TaskGroup) *structs.ReschedulePolicy {
	switch {
	case tg.ReschedulePolicy != nil:
		return tg.ReschedulePolicy
	case job.Reschedule != nil:
		return job.Reschedule
	case job.Type == structs.JobTypeBatch:
		return &defaultBatchReschedule
	}
	return &defaultServiceReschedule
}

// failTime is when an allocation failed: the latest task finish time, or
// the allocation's last modification when no task reported one.
func failTime(a *structs.Allocation) time.Time {
	var t time.Time
	for _, ts := range a.TaskStates {
		if ts != nil && ts.FinishedAt.After(t) {
			t = ts.FinishedAt
		}
	}
	if t.IsZero() {
		t = time.Unix(0, a.ModifyTime)
	}
	return t
}

// rescheduleAttemptsLeft reports whether the policy allows one more
// reschedule of the allocation's lineage at failure time ft.
func rescheduleAttemptsLeft(p *structs.ReschedulePolicy, a *structs.Allocation, ft time.Time) bool {
	if p == nil {
		return false
	}
	if p.Unlimited {
		return true
	}
	if p.Attempts <= 0 {
		return false
	}
	used := 0
	if a.RescheduleTracker != nil {
		for _, e := range a.RescheduleTracker.Events {
			if p.Interval <= 0 || ft.Sub(time.Unix(0, e.RescheduleTime)) < p.Interval {
				used++
			}
		}
	}
	return used < p.Attempts
}

// rescheduleDelay is how long after failing the allocation is replaced:
// constant, doubling (exponential) or the Fibonacci sequence of the
// previous delays, never above MaxDelay when one is set.
func rescheduleDelay(p *structs.ReschedulePolicy, a *structs.Allocation) time.Duration {
	var events []*structs.RescheduleEvent
	if a.RescheduleTracker != nil {
		events = a.RescheduleTracker.Events
	}
	d := p.Delay
	switch p.DelayFunction {
	case structs.RescheduleDelayExponential:
		if n := len(events); n > 0 && events[n-1].Delay > 0 {
			d = events[n-1].Delay * 2
		}
	case structs.RescheduleDelayFibonacci:
		if n := len(events); n >= 2 && events[n-1].Delay > 0 && events[n-2].Delay > 0 {
			d = events[n-1].Delay + events[n-2].Delay
		}
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d
}

// nextTracker carries a lineage's reschedule history to the replacement,
// keeping only events that still count against the policy.
func nextTracker(p *structs.ReschedulePolicy, prev *structs.Allocation, now time.Time, delay time.Duration) *structs.RescheduleTracker {
	t := &structs.RescheduleTracker{}
	if prev.RescheduleTracker != nil {
		for _, e := range prev.RescheduleTracker.Events {
			if p.Unlimited || p.Interval <= 0 || now.Sub(time.Unix(0, e.RescheduleTime)) < p.Interval {
				ec := *e
				t.Events = append(t.Events, &ec)
			}
		}
	}
	// Unlimited lineages would grow without bound; the delay functions
	// only look at the last two events.
	if p.Unlimited && len(t.Events) > 9 {
		t.Events = t.Events[len(t.Events)-9:]
	}
	t.Events = append(t.Events, &structs.RescheduleEvent{
		RescheduleTime: now.UnixNano(),
		PrevAllocID:    prev.ID,
		PrevNodeID:     prev.NodeID,
		Delay:          delay,
	})
	return t
}
