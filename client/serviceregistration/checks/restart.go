package checks

import (
	"time"

	"github.com/nomadq/nomadq/structs"
)

// RestartWatch decides check_restart for one check: after Limit failures
// in a row, not counting those during Grace after the task (re)started,
// the task restarts. It has no clock: the caller passes the times.
type RestartWatch struct {
	policy   structs.CheckRestart
	failures int
}

// NewRestartWatch returns the watch of a check's check_restart; nil when
// the check has none (or a limit of 0, which never restarts).
func NewRestartWatch(c *structs.ServiceCheck) *RestartWatch {
	if c == nil || c.CheckRestart == nil || c.CheckRestart.Limit <= 0 {
		return nil
	}
	return &RestartWatch{policy: *c.CheckRestart}
}

// Observe takes one run's outcome of the check of a task that started at
// startedAt (zero when it is not running) and reports whether to restart
// the task now; the count starts again after a restart.
func (w *RestartWatch) Observe(o Outcome, now, startedAt time.Time) bool {
	if w == nil {
		return false
	}
	if startedAt.IsZero() || now.Before(startedAt.Add(w.policy.Grace)) {
		w.failures = 0
		return false
	}
	if o.Status != StatusFailure {
		w.failures = 0
		return false
	}
	w.failures++
	if w.failures < w.policy.Limit {
		return false
	}
	w.failures = 0
	return true
}

// RestartReason is the restart reason of a task event when a check's
// failures restart it, in Nomad's words.
func RestartReason(check string) string {
	return "healthcheck: check " + `"` + check + `"` + " unhealthy"
}
