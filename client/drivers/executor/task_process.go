package executor

import (
	"errors"
	"syscall"

	"github.com/nomadq/nomadq/client/drivers"
)

// SignalTask sends signal to the task's main process, as Nomad's executor
// does; the rest of the process group is left alone so a task that traps
// the signal decides what its children get.
func (e *Executor) SignalTask(id string, signal string) error {
	t, err := e.get(id)
	if err != nil {
		return err
	}
	if signal == "" {
		return e.errorf("no signal given")
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return err
	}
	select {
	case <-t.done:
		return e.errorf("task %s is not running", id)
	default:
	}
	if !alive(t.state.Pid, t.state.StartTime) {
		return e.errorf("task %s is not running", id)
	}
	if err := syscall.Kill(t.state.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return e.errorf("signal pid %d: %w", t.state.Pid, err)
	}
	return nil
}

// TaskPid returns the pid of the task's main process while it runs.
func (e *Executor) TaskPid(id string) (int, error) {
	t, err := e.get(id)
	if err != nil {
		return 0, err
	}
	select {
	case <-t.done:
		return 0, e.errorf("task %s is not running", id)
	default:
	}
	if !alive(t.state.Pid, t.state.StartTime) {
		return 0, e.errorf("task %s is not running", id)
	}
	return t.state.Pid, nil
}
