package allocrunner

import (
	"strconv"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/structs"
)

// MaxRunWarningsMetric is the go-metrics key of the counter of warnings
// sent, one per alloc and deadline.
var MaxRunWarningsMetric = []string{"client", "allocs", "max_run_duration", "warnings_total"}

// MaxRunWarnAction is what the hook must do about the group's
// max_run_duration_warning after applying an alloc.
type MaxRunWarnAction int

const (
	// MaxRunWarnKeep changes nothing.
	MaxRunWarnKeep MaxRunWarnAction = iota
	// MaxRunWarnDisarm stops the warning timer and takes the warning
	// time out of the environment of tasks started from now on.
	MaxRunWarnDisarm
	// MaxRunWarnArm puts the warning time in the task environment and
	// waits for it.
	MaxRunWarnArm
	// MaxRunWarnSend puts the warning time in the task environment and
	// signals the tasks now: the warning time has passed.
	MaxRunWarnSend
	// MaxRunWarnSettle puts the warning time in the task environment and
	// sends nothing: the warning for this deadline was sent already (by
	// this client or, before a restart, an earlier one), or the deadline
	// itself has passed and the kill is the news.
	MaxRunWarnSettle
)

// DecideMaxRunWarning is the warning's policy, applied after DecideMaxRun
// to the state it returned and its plan (never for a stale alloc). sent
// reports whether the tasks' events already show the warning for a
// deadline, so a restarted client never sends it twice. It has no clock
// and no side effects. Only a change of the warning time (the deadline or
// before moved) or of the signal re-arms; a warning moved to a later time
// is sent again, for the new deadline.
func DecideMaxRunWarning(st MaxRunState, plan MaxRunPlan, now time.Time, sent func(deadline time.Time) bool) (MaxRunState, MaxRunWarnAction) {
	if !plan.Armed || plan.WarnAt.IsZero() {
		if st.warnAt.IsZero() {
			return st, MaxRunWarnKeep
		}
		st.warnAt, st.warnSignal, st.warnSent = time.Time{}, "", false
		return st, MaxRunWarnDisarm
	}
	if st.warnAt.Equal(plan.WarnAt) && st.warnSignal == plan.WarnSignal {
		return st, MaxRunWarnKeep
	}
	if !st.warnAt.Equal(plan.WarnAt) {
		st.warnSent = sent != nil && sent(plan.Deadline)
	}
	st.warnAt, st.warnSignal = plan.WarnAt, plan.WarnSignal
	switch {
	case st.warnSent || plan.Remaining <= 0:
		return st, MaxRunWarnSettle
	case !now.Before(plan.WarnAt):
		st.warnSent = true
		return st, MaxRunWarnSend
	}
	return st, MaxRunWarnArm
}

// MaxRunWarningReason is the reason of the Signaling event the warning
// records on each task it reaches: it names the deadline, which is how a
// restarted client knows the warning for that deadline went out.
func MaxRunWarningReason(deadline time.Time) string {
	return structs.MaxRunWarningReasonPrefix + deadline.UTC().Format(time.RFC3339)
}

// warningSent reports whether a task's events show the warning for
// deadline.
func (h *maxRunDurationHook) warningSent(deadline time.Time) bool {
	reason := MaxRunWarningReason(deadline)
	for _, ts := range h.r.TaskStates() {
		if ts == nil {
			continue
		}
		for _, e := range ts.Events {
			if e.Type == structs.TaskSignaling && e.TaskSignalReason == reason {
				return true
			}
		}
	}
	return false
}

// applyWarningLocked keeps the warning timer and the task environment in
// line with act; it reports whether the warning must be sent now, which
// the caller does once the lock is released.
func (h *maxRunDurationHook) applyWarningLocked(act MaxRunWarnAction) bool {
	switch act {
	case MaxRunWarnKeep:
		return false
	case MaxRunWarnDisarm:
		h.stopWarnTimerLocked()
		h.r.UnsetTaskEnv(MaxRunWarningEnvVar)
		return false
	}
	h.stopWarnTimerLocked()
	h.r.SetTaskEnv(MaxRunWarningEnvVar, strconv.FormatInt(h.state.warnAt.Unix(), 10))
	if act == MaxRunWarnArm {
		gen := h.warnGen
		h.warnTimer = time.AfterFunc(time.Until(h.state.warnAt), func() { h.fireWarning(gen) })
	}
	return act == MaxRunWarnSend
}

func (h *maxRunDurationHook) stopWarnTimerLocked() {
	if h.warnTimer != nil {
		h.warnTimer.Stop()
		h.warnTimer = nil
	}
	h.warnGen++
}

// fireWarning sends the warning if this timer is still the current one
// and the warning time has really passed (never early: a wall clock step
// back re-arms instead).
func (h *maxRunDurationHook) fireWarning(gen uint64) {
	h.mu.Lock()
	if h.stopped || gen != h.warnGen || h.state.warnSent {
		h.mu.Unlock()
		return
	}
	if wait := time.Until(h.state.warnAt); wait > 0 {
		h.warnTimer = time.AfterFunc(wait, func() { h.fireWarning(gen) })
		h.mu.Unlock()
		return
	}
	h.warnTimer = nil
	h.state.warnSent = true
	deadline, signal := h.state.deadline, h.state.warnSignal
	h.mu.Unlock()
	h.sendWarning(deadline, signal)
}

// sendWarning signals every running task of the alloc once.
func (h *maxRunDurationHook) sendWarning(deadline time.Time, signal string) {
	if h.r.ShuttingDown() {
		return
	}
	n := h.r.SignalTasks(signal, MaxRunWarningReason(deadline))
	h.r.Logger().Debug("max_run_duration warning sent", "signal", signal, "deadline", deadline, "tasks", n)
	if n > 0 {
		countMaxRunWarning(h.r.Alloc())
	}
}

// countMaxRunWarning counts a warning sent, through the process's
// go-metrics handle (the agent's sinks under `nomad agent`).
func countMaxRunWarning(a *structs.Allocation) {
	if a == nil {
		return
	}
	metrics.IncrCounterWithLabels(MaxRunWarningsMetric, 1, []metrics.Label{
		{Name: "namespace", Value: a.Namespace},
		{Name: "job", Value: a.JobID},
		{Name: "task_group", Value: a.TaskGroup},
	})
}
