package allocrunner

import (
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// MaxRunDurationReason is the ClientDescription of an alloc, and the
// display message of its tasks' Killing events, when max_run_duration
// ended it.
const MaxRunDurationReason = "allocation exceeded max_run_duration"

// MaxRunEnvVar holds the alloc's deadline (RFC3339, UTC) in the
// environment of tasks started while it was armed.
const MaxRunEnvVar = "NOMAD_ALLOC_DEADLINE"

func init() { registerEarlyHook(newMaxRunDurationHook) }

// MaxRunPlan is what max_run_duration means for an alloc at one instant.
type MaxRunPlan struct {
	// Armed is false when no deadline applies: the group sets none, the
	// job is not batch or sysbatch, the alloc is terminal or told to
	// stop, or it has no CreateTime.
	Armed bool
	// Configured is the group's max_run_duration.
	Configured time.Duration
	// Deadline is CreateTime + Configured.
	Deadline time.Time
	// Remaining is Deadline - now; zero or less means act at once.
	Remaining time.Duration
}

// PlanMaxRun decides, from the alloc alone and the time, whether a
// max_run_duration deadline applies and how far away it is. It has no
// clock and no side effects, so every timing rule is testable here.
func PlanMaxRun(a *structs.Allocation, now time.Time) MaxRunPlan {
	if a == nil || a.Job == nil || a.CreateTime == 0 || a.TerminalStatus() {
		return MaxRunPlan{}
	}
	if a.DesiredStatus != "" && a.DesiredStatus != structs.AllocDesiredStatusRun {
		return MaxRunPlan{}
	}
	if a.Job.Type != structs.JobTypeBatch && a.Job.Type != structs.JobTypeSysBatch {
		return MaxRunPlan{}
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.MaxRunDuration == nil || *tg.MaxRunDuration <= 0 {
		return MaxRunPlan{}
	}
	deadline, ok := a.MaxRunDeadline()
	if !ok {
		return MaxRunPlan{}
	}
	return MaxRunPlan{Armed: true, Configured: *tg.MaxRunDuration, Deadline: deadline, Remaining: deadline.Sub(now)}
}

// maxRunDurationHook kills the alloc at CreateTime + max_run_duration.
// It is the first prerun hook, so slow setup counts against the limit.
// PlanMaxRun decides; the hook only keeps one timer in line with it.
type maxRunDurationHook struct {
	r Runner

	mu         sync.Mutex
	timer      *time.Timer
	armed      bool
	configured time.Duration
	deadline   time.Time
	// gen tells a timer that fired late, after a re-arm or a stop, that
	// it is stale.
	gen     uint64
	stopped bool
}

func newMaxRunDurationHook(r Runner) RunnerHook { return &maxRunDurationHook{r: r} }

func (h *maxRunDurationHook) Name() string { return "max_run_duration" }

// Prerun arms the timer before any other setup step runs.
func (h *maxRunDurationHook) Prerun() error {
	h.apply(h.r.Alloc())
	return nil
}

// Update re-arms only when the configured duration really changed, so
// unrelated alloc updates never move the deadline.
func (h *maxRunDurationHook) Update(a *structs.Allocation) error {
	h.apply(a)
	return nil
}

// Postrun stops the timer: every task has exited.
func (h *maxRunDurationHook) Postrun() error {
	h.stop()
	return nil
}

// Shutdown stops the timer: an agent shutdown is never a timeout.
func (h *maxRunDurationHook) Shutdown() { h.stop() }

func (h *maxRunDurationHook) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	h.disarmLocked()
}

func (h *maxRunDurationHook) disarmLocked() {
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.armed = false
	h.gen++
}

func (h *maxRunDurationHook) apply(a *structs.Allocation) {
	plan := PlanMaxRun(a, time.Now())
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	if !plan.Armed {
		h.disarmLocked()
		return
	}
	if h.armed && h.configured == plan.Configured {
		return
	}
	if h.armed {
		h.r.Logger().Debug("updated max_run_duration", "old", h.configured, "new", plan.Configured, "deadline", plan.Deadline)
	}
	h.disarmLocked()
	h.armed, h.configured, h.deadline = true, plan.Configured, plan.Deadline
	h.r.SetTaskEnv(MaxRunEnvVar, plan.Deadline.UTC().Format(time.RFC3339))
	gen := h.gen
	if plan.Remaining <= 0 {
		h.r.Logger().Debug("allocation exceeded max_run_duration, enforcing immediately", "deadline", plan.Deadline)
		go h.fire(gen)
		return
	}
	h.timer = time.AfterFunc(plan.Remaining, func() { h.fire(gen) })
}

// fire kills the alloc if this timer is still the current one and the
// deadline has really passed (a wall clock step back re-arms instead).
func (h *maxRunDurationHook) fire(gen uint64) {
	h.mu.Lock()
	if h.stopped || gen != h.gen {
		h.mu.Unlock()
		return
	}
	if wait := time.Until(h.deadline); wait > 0 {
		h.timer = time.AfterFunc(wait, func() { h.fire(gen) })
		h.mu.Unlock()
		return
	}
	h.timer = nil
	deadline := h.deadline
	h.mu.Unlock()
	if h.r.ShuttingDown() {
		return
	}
	// KillAll returns false when a stop is already under way: the stop
	// won the race and stays a stop.
	if h.r.KillAll("max_run_duration", KillAllOpts{
		DisplayMessage:    MaxRunDurationReason,
		SkipPoststop:      true,
		ClientStatus:      structs.AllocClientStatusComplete,
		ClientDescription: MaxRunDurationReason,
	}) {
		h.r.Logger().Debug("allocation exceeded max_run_duration, killing tasks", "deadline", deadline)
	}
}
