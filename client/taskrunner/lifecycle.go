package taskrunner

import (
	"context"
	"errors"
	"fmt"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// ErrTaskNotRunning is returned for an operation that needs a running task;
// the text is Nomad's.
var ErrTaskNotRunning = errors.New("Task not running")

// Reasons recorded on events of operations a user asked for.
const (
	reasonUserRestart = "User requested restart"
	reasonUserSignal  = "User requested signal"
)

// running returns the current run's ID and start config, or
// ErrTaskNotRunning.
func (tr *TaskRunner) running() (string, *drivers.TaskConfig, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.killed || tr.state.State != structs.TaskStateRunning || tr.runID == "" || tr.local.Handle == nil {
		return "", nil, ErrTaskNotRunning
	}
	return tr.runID, tr.local.Handle.Config, nil
}

// Restart stops the running task with its kill_signal and starts it again
// at once; the restart counts in the task's Restarts but not against its
// restart policy's attempts, as in Nomad.
func (tr *TaskRunner) Restart() error { return tr.restartFor(reasonUserRestart) }

// restartFor restarts the running task, recording reason (a user's
// request, or a template's change_mode).
func (tr *TaskRunner) restartFor(reason string) error {
	if _, _, err := tr.running(); err != nil {
		return err
	}
	e := NewEvent(structs.TaskRestartSignal)
	e.RestartReason = reason
	tr.EmitEvent(e)
	select {
	case tr.restartCh <- struct{}{}:
	default:
		// A restart is already on its way.
	}
	return nil
}

// restarted records the end of a run stopped for a user's restart and
// starts the next run without delay, unless the task was killed meanwhile.
func (tr *TaskRunner) restarted(id string, res *drivers.ExitResult) bool {
	tr.recordExit(id, res)
	tr.mu.Lock()
	killed, failure := tr.killed, tr.restartFailure
	tr.restartFailure = false
	tr.mu.Unlock()
	if killed {
		tr.update(structs.TaskStateDead, NewEvent(structs.TaskKilled), nil)
		return false
	}
	if failure {
		return tr.applyRestartPolicy(&drivers.ExitResult{ExitCode: res.ExitCode, Signal: res.Signal, Err: errRestartFailure})
	}
	return tr.waitRestart(0, "")
}

// Signal sends signal to the running task's main process and records a
// Signaling event.
func (tr *TaskRunner) Signal(signal string) error { return tr.signalFor(signal, reasonUserSignal) }

// SignalFor sends signal to the running task's main process, recording
// reason on its Signaling event (a hook's, such as max_run_duration's
// warning).
func (tr *TaskRunner) SignalFor(signal, reason string) error { return tr.signalFor(signal, reason) }

// signalFor signals the running task, recording reason.
func (tr *TaskRunner) signalFor(signal, reason string) error {
	id, _, err := tr.running()
	if err != nil {
		return err
	}
	s, ok := tr.cfg.Driver.(drivers.TaskSignaler)
	if !ok {
		return fmt.Errorf("driver %q cannot signal tasks", tr.cfg.Task.Driver)
	}
	if _, err := drivers.ParseSignal(signal); err != nil {
		return err
	}
	e := NewEvent(structs.TaskSignaling)
	e.TaskSignal = signal
	e.TaskSignalReason = reason
	// Persisted with the task state, so a restarted client knows the
	// signal went out (max_run_duration's warning is sent once).
	tr.update("", e, nil)
	return s.SignalTask(id, signal)
}

// Exec runs a command inside the running task, as its driver defines
// "inside", and returns the command's exit code.
func (tr *TaskRunner) Exec(ctx context.Context, opts *drivers.ExecOptions) (int, error) {
	_, tc, err := tr.running()
	if err != nil {
		return 0, err
	}
	x, ok := tr.cfg.Driver.(drivers.TaskExecer)
	if !ok {
		return 0, fmt.Errorf("%w: driver %q runs no commands inside its tasks", drivers.ErrExecNotSupported, tr.cfg.Task.Driver)
	}
	return x.ExecTask(ctx, tc, opts)
}
