package allocrunner

import (
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// MaxRunDurationReason is the ClientDescription of an alloc, and the
// display message of its tasks' Killing events, when max_run_duration
// ended it.
const MaxRunDurationReason = structs.AllocTimeoutReasonMaxRunDuration

// MaxRunEnvVar holds the alloc's deadline (RFC3339, UTC) in the
// environment of tasks started while it is armed; tasks started after a
// disarm do not get it.
const MaxRunEnvVar = "NOMAD_ALLOC_DEADLINE"

// MaxRunWarningEnvVar holds, in unix seconds, when the group's
// max_run_duration_warning signal is due, in the environment of tasks
// started while a warning is armed.
const MaxRunWarningEnvVar = "NOMAD_ALLOC_DEADLINE_WARNING"

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
	// WarnAt is when the group's max_run_duration_warning is due
	// (Deadline - before); zero when the group asks for none.
	WarnAt time.Time
	// WarnSignal is the signal the warning sends.
	WarnSignal string
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
	plan := MaxRunPlan{Armed: true, Configured: *tg.MaxRunDuration, Deadline: deadline, Remaining: deadline.Sub(now)}
	if w := tg.MaxRunDurationWarning; w != nil && w.Before > 0 && w.Before < plan.Configured && w.Signal != "" {
		plan.WarnAt, plan.WarnSignal = deadline.Add(-w.Before), w.Signal
	}
	return plan
}

// MaxRunState is what the hook (or a simulated node, client/sim) has put
// in place for its alloc; the zero value is nothing yet.
type MaxRunState struct {
	// index is the AllocModifyIndex of the newest alloc applied; an
	// older one arriving late is stale and changes nothing.
	index uint64
	// armed, configured and deadline describe the deadline in force.
	armed      bool
	configured time.Duration
	deadline   time.Time
	// warnAt and warnSignal describe the warning in force; warnSent is
	// set once it was sent for this warnAt.
	warnAt     time.Time
	warnSignal string
	warnSent   bool
}

// MaxRunAction is what the hook must do after applying an alloc.
type MaxRunAction int

const (
	// MaxRunKeep changes nothing: a stale alloc, or the same limit.
	MaxRunKeep MaxRunAction = iota
	// MaxRunDisarm stops the timer and takes the deadline out of the
	// environment of tasks started from now on.
	MaxRunDisarm
	// MaxRunArm puts the new deadline in the task environment and waits
	// for it.
	MaxRunArm
	// MaxRunKill puts the new deadline in the task environment and kills
	// the alloc now: the deadline has passed.
	MaxRunKill
)

// DecideMaxRun is the hook's policy, which simulated nodes share: from
// what is in place, an alloc and
// the time, the state to keep and what to do now. It has no clock and no
// side effects. Only a change of the configured duration moves an armed
// deadline, so unrelated alloc updates never do.
func DecideMaxRun(cur MaxRunState, a *structs.Allocation, now time.Time) (MaxRunState, MaxRunAction, MaxRunPlan) {
	if a == nil || a.AllocModifyIndex < cur.index {
		return cur, MaxRunKeep, MaxRunPlan{}
	}
	next := cur
	next.index = a.AllocModifyIndex
	plan := PlanMaxRun(a, now)
	switch {
	case !plan.Armed:
		if !cur.armed {
			return next, MaxRunKeep, plan
		}
		next.armed, next.configured, next.deadline = false, 0, time.Time{}
		return next, MaxRunDisarm, plan
	case cur.armed && cur.configured == plan.Configured:
		return next, MaxRunKeep, plan
	}
	next.armed, next.configured, next.deadline = true, plan.Configured, plan.Deadline
	if plan.Remaining <= 0 {
		return next, MaxRunKill, plan
	}
	return next, MaxRunArm, plan
}

// maxRunDurationHook kills the alloc at CreateTime + max_run_duration.
// It is the first prerun hook, so slow setup counts against the limit.
// DecideMaxRun decides under the lock; the hook only keeps one timer
// and the task environment in line with it.
type maxRunDurationHook struct {
	r Runner

	mu    sync.Mutex
	state MaxRunState
	timer *time.Timer
	// gen tells a timer that fired late, after a re-arm or a stop, that
	// it is stale.
	gen     uint64
	stopped bool
	// warnTimer and warnGen do for the warning what timer and gen do for
	// the deadline.
	warnTimer *time.Timer
	warnGen   uint64
}

func newMaxRunDurationHook(r Runner) RunnerHook { return &maxRunDurationHook{r: r} }

func (h *maxRunDurationHook) Name() string { return "max_run_duration" }

// Prerun arms the timer before any other setup step runs. An alloc
// whose deadline has already passed is killed before Prerun returns, so
// the runner never lets one of its tasks start.
func (h *maxRunDurationHook) Prerun() error {
	h.apply(h.r.Alloc())
	return nil
}

// Update applies a newer version of the alloc; see DecideMaxRun.
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
	h.stopTimerLocked()
	h.stopWarnTimerLocked()
}

func (h *maxRunDurationHook) stopTimerLocked() {
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.gen++
}

// apply decides and acts on a under the lock, so a stale alloc can never
// undo a newer one and the task environment always matches the decision.
// The kill itself runs after the lock is released, before apply returns.
func (h *maxRunDurationHook) apply(a *structs.Allocation) {
	h.mu.Lock()
	if h.stopped || a == nil || a.AllocModifyIndex < h.state.index {
		h.mu.Unlock()
		return
	}
	now := wallNow()
	prev := h.state
	next, action, plan := DecideMaxRun(prev, a, now)
	next, warn := DecideMaxRunWarning(next, plan, now, h.warningSent)
	h.state = next
	sendWarning := h.applyWarningLocked(warn)
	kill := h.applyDeadlineLocked(prev, action, plan)
	h.mu.Unlock()
	if sendWarning {
		h.sendWarning(plan.Deadline, plan.WarnSignal)
	}
	if kill {
		h.r.Logger().Debug("allocation exceeded max_run_duration, enforcing immediately", "deadline", plan.Deadline)
		h.kill(plan.Deadline)
	}
}

// applyDeadlineLocked keeps the deadline timer and the task environment
// in line with action; it reports whether the alloc must be killed now,
// which the caller does once the lock is released.
func (h *maxRunDurationHook) applyDeadlineLocked(prev MaxRunState, action MaxRunAction, plan MaxRunPlan) bool {
	switch action {
	case MaxRunKeep:
		return false
	case MaxRunDisarm:
		h.stopTimerLocked()
		h.r.UnsetTaskEnv(MaxRunEnvVar)
		return false
	}
	if prev.armed {
		h.r.Logger().Debug("updated max_run_duration", "old", prev.configured, "new", plan.Configured, "deadline", plan.Deadline)
	}
	h.stopTimerLocked()
	h.r.SetTaskEnv(MaxRunEnvVar, plan.Deadline.UTC().Format(time.RFC3339))
	if action == MaxRunArm {
		gen := h.gen
		h.timer = time.AfterFunc(plan.Remaining, func() { h.fire(gen) })
		return false
	}
	return true
}

// maxRunRecheck bounds how long a timer that fired before the wall
// clock reached the deadline waits before it looks again: a clock
// stepped back and then corrected must not delay the kill by the step.
const maxRunRecheck = time.Second

// fire kills the alloc if this timer is still the current one and the
// deadline has really passed (a wall clock step back re-arms instead,
// looking again at least every maxRunRecheck).
func (h *maxRunDurationHook) fire(gen uint64) {
	h.mu.Lock()
	if h.stopped || gen != h.gen {
		h.mu.Unlock()
		return
	}
	deadline := h.state.deadline
	if wait := deadline.Sub(wallNow()); wait > 0 {
		h.timer = time.AfterFunc(min(wait, maxRunRecheck), func() { h.fire(gen) })
		h.mu.Unlock()
		return
	}
	h.timer = nil
	h.mu.Unlock()
	h.kill(deadline)
}

func (h *maxRunDurationHook) kill(deadline time.Time) {
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
