package taskrunner

import (
	"errors"

	"github.com/nomadq/nomadq/structs"
)

// errRestartFailure is the exit error of a run stopped by RestartFailure.
var errRestartFailure = errors.New("restarted as a failure")

// RestartFailure stops the running task as a failed run (a check that
// failed check_restart's limit), recording reason on its Restart
// Signaled event; the restart policy then decides, as in Nomad: a restart
// after its delay that counts against its attempts, or a failed task
// once they are spent.
func (tr *TaskRunner) RestartFailure(reason string) error {
	if _, _, err := tr.running(); err != nil {
		return err
	}
	tr.mu.Lock()
	tr.restartFailure = true
	tr.mu.Unlock()
	e := NewEvent(structs.TaskRestartSignal)
	e.RestartReason = reason
	tr.EmitEvent(e)
	select {
	case tr.restartCh <- struct{}{}:
	default:
		// A restart is already on its way; it now counts as a failure.
	}
	return nil
}
