package taskrunner

import (
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// RestartTracker applies a task's restart policy exactly as a task
// runner does, for node agents that simulate tasks (the node simulator).
type RestartTracker struct {
	t *restartTracker
}

// NewRestartTracker returns the tracker of a task of a job of jobType
// under policy p, its window starting at now.
func NewRestartTracker(p structs.RestartPolicy, jobType string, now time.Time) *RestartTracker {
	return &RestartTracker{t: newRestartTracker(p, jobType, now)}
}

// Next decides what follows an exit at now: restart after delay, or
// stay dead (failed tells whether that fails the task), with the reason
// for the task event.
func (r *RestartTracker) Next(now time.Time, res *drivers.ExitResult) (restart, failed bool, delay time.Duration, reason string) {
	d, delay, reason := r.t.next(now, res)
	switch d {
	case decideRestart:
		return true, false, delay, reason
	case decideNoRestart:
		return false, true, 0, reason
	}
	return false, false, 0, reason
}

// KillTimeout is how long a task is given to exit when killed: its
// kill_timeout or the default.
func KillTimeout(t *structs.Task) time.Duration {
	if t.KillTimeout > 0 {
		return t.KillTimeout
	}
	return DefaultKillTimeout
}
