package structs

import (
	"fmt"
	"strings"
	"time"
)

// MinMaxRunDuration is the shortest max_run_duration (and warning
// before) accepted. A shorter one is nearly always a number written
// without its unit, which Go reads as nanoseconds: the job would be
// killed before its task starts and still report complete.
const MinMaxRunDuration = time.Second

// MaxRunDurationWarning asks the client to signal every running task of
// the group once, Before the max_run_duration deadline, so that the task
// can checkpoint before it is killed.
type MaxRunDurationWarning struct {
	// Before is how long before the deadline the signal is sent.
	Before time.Duration
	// Signal is the signal sent, such as "SIGUSR1".
	Signal string
}

// Copy returns a copy of w; nil stays nil.
func (w *MaxRunDurationWarning) Copy() *MaxRunDurationWarning {
	if w == nil {
		return nil
	}
	c := *w
	return &c
}

// knownSignals are the signal names every platform nomadq runs on knows,
// without their "SIG" prefix.
var knownSignals = []string{
	"ABRT", "ALRM", "BUS", "CHLD", "CONT", "FPE", "HUP", "ILL", "INT", "IO",
	"KILL", "PIPE", "PROF", "QUIT", "SEGV", "STOP", "SYS", "TERM", "TRAP",
	"TSTP", "TTIN", "TTOU", "URG", "USR1", "USR2", "VTALRM", "WINCH", "XCPU", "XFSZ",
}

// KnownSignal reports whether name is a signal name, written as the task
// drivers take it: in any case, with or without the "SIG" prefix.
func KnownSignal(name string) bool {
	n := strings.TrimPrefix(strings.ToUpper(name), "SIG")
	for _, s := range knownSignals {
		if s == n {
			return true
		}
	}
	return false
}

// tooShortDuration refuses a duration below MinMaxRunDuration for key,
// showing it as the API carries it (integer nanoseconds) and what that
// means. A small count is most likely seconds written without a unit, so
// the message suggests the unit.
func tooShortDuration(key string, d time.Duration) error {
	n := d.Nanoseconds()
	if n < int64(time.Millisecond) {
		return fmt.Errorf("%s %d is %s; did you mean \"%ds\"? (the minimum is %s)", key, n, d, n, MinMaxRunDuration)
	}
	return fmt.Errorf("%s %d is %s; the minimum is %s", key, n, d, MinMaxRunDuration)
}

// ValidateMaxRunDurationWarning checks a group's max_run_duration_warning
// against its max_run_duration (nil when the group sets none).
func ValidateMaxRunDurationWarning(w *MaxRunDurationWarning, maxRun *time.Duration) error {
	var errs MultiError
	switch {
	case w.Before <= 0:
		errs.Add(fmt.Errorf("max_run_duration_warning before must be greater than zero, got %s", w.Before))
	case w.Before < MinMaxRunDuration:
		errs.Add(tooShortDuration("max_run_duration_warning before", w.Before))
	case maxRun == nil:
		errs.Add(fmt.Errorf("max_run_duration_warning is only allowed with max_run_duration set"))
	case w.Before >= *maxRun:
		errs.Add(fmt.Errorf("max_run_duration_warning before %s must be less than max_run_duration %s", w.Before, *maxRun))
	}
	switch {
	case w.Signal == "":
		errs.Add(fmt.Errorf("max_run_duration_warning signal must be set, such as \"SIGUSR1\""))
	case !KnownSignal(w.Signal):
		errs.Add(fmt.Errorf("max_run_duration_warning signal %q is not a known signal, such as \"SIGUSR1\"", w.Signal))
	}
	return errs.ErrorOrNil()
}

// MaxRunWarningReasonPrefix begins the reason of the Signaling event the
// client records on each task its max_run_duration_warning reaches; the
// deadline follows, in RFC3339.
const MaxRunWarningReasonPrefix = "max_run_duration deadline at "

// MaxRunWarningSent reports whether the alloc's task states show that its
// max_run_duration_warning was sent.
func (a *Allocation) MaxRunWarningSent() bool {
	for _, ts := range a.TaskStates {
		if ts == nil {
			continue
		}
		for _, e := range ts.Events {
			if e != nil && e.Type == TaskSignaling && strings.HasPrefix(e.TaskSignalReason, MaxRunWarningReasonPrefix) {
				return true
			}
		}
	}
	return false
}
