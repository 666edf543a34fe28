package taskrunner

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// Restart reasons, as Nomad words them.
const (
	ReasonNoRestartsAllowed = "Policy allows no restarts"
	ReasonUnrecoverable     = "Error was unrecoverable"
	ReasonWithinPolicy      = "Restart within policy"
	ReasonDelay             = "Exceeded allowed attempts, applying a delay"
	ReasonSuccess           = "Restart unnecessary as task terminated successfully"
)

// decision is what to do after a task exited.
type decision int

const (
	decideDone      decision = iota // exited successfully, stays dead
	decideRestart                   // restart after the delay
	decideNoRestart                 // dead and failed
)

// restartTracker applies a restart policy. It is pure: the caller passes
// the time, so it is tested without a clock.
type restartTracker struct {
	policy structs.RestartPolicy
	// onSuccess restarts tasks that exit 0 too (service and system jobs).
	onSuccess   bool
	count       int
	windowStart time.Time
}

// DefaultRestartPolicy returns Nomad's default policy for a job type.
func DefaultRestartPolicy(jobType string) structs.RestartPolicy {
	if jobType == structs.JobTypeBatch || jobType == structs.JobTypeSysBatch {
		return structs.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}
	}
	return structs.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}
}

func newRestartTracker(p structs.RestartPolicy, jobType string, now time.Time) *restartTracker {
	return &restartTracker{
		policy:      p,
		onSuccess:   jobType != structs.JobTypeBatch && jobType != structs.JobTypeSysBatch,
		windowStart: now,
	}
}

// next decides what follows an exit: the decision, the delay before a
// restart, and the reason for the event.
func (r *restartTracker) next(now time.Time, res *drivers.ExitResult) (decision, time.Duration, string) {
	success := res != nil && res.Successful()
	if success && !r.onSuccess {
		return decideDone, 0, ReasonSuccess
	}
	if r.policy.Attempts == 0 {
		if success {
			return decideDone, 0, ReasonNoRestartsAllowed
		}
		return decideNoRestart, 0, ReasonNoRestartsAllowed
	}
	end := r.windowStart.Add(r.policy.Interval)
	if now.After(end) {
		r.count = 0
		r.windowStart = now
		end = now.Add(r.policy.Interval)
	}
	r.count++
	if r.count > r.policy.Attempts {
		if r.policy.Mode == structs.RestartPolicyModeFail {
			return decideNoRestart, 0, fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is %q",
				r.policy.Attempts, r.policy.Interval, structs.RestartPolicyModeFail)
		}
		// Mode "delay": wait out the interval, then a fresh window.
		delay := end.Sub(now)
		r.count = 0
		r.windowStart = end
		return decideRestart, delay, ReasonDelay
	}
	return decideRestart, r.policy.Delay, ReasonWithinPolicy
}
