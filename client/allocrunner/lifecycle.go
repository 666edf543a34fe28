package allocrunner

import (
	"errors"
	"fmt"

	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

// ErrUnknownTask is returned for a task name the allocation does not have.
var ErrUnknownTask = errors.New("Task not found")

// ErrRefused wraps the refusal of an operation the alloc's state does not
// allow.
var ErrRefused = errors.New("refused")

// Restart restarts one task (task), every running task (task "" and not
// allTasks), or every task (allTasks). Restarting tasks that already
// finished is not something nomadq's task runners can do, so allTasks is
// refused up front when a task is dead, before anything is restarted.
func (ar *AllocRunner) Restart(task string, allTasks bool) error {
	if allTasks && task != "" {
		return fmt.Errorf("%w: task name cannot be set when restarting all tasks", ErrRefused)
	}
	if ar.ShuttingDown() || ar.Alloc().TerminalStatus() {
		return fmt.Errorf("%w: restart of an alloc that should not run", ErrRefused)
	}
	if task != "" {
		tr := ar.tasks[task]
		if tr == nil {
			return fmt.Errorf("%w: %q", ErrUnknownTask, task)
		}
		return tr.Restart()
	}
	if allTasks {
		for _, tr := range ar.order {
			if tr.State().State == structs.TaskStateDead {
				return fmt.Errorf("%w: cannot restart all tasks: task %q has finished and nomadq does not run finished tasks again; restart the running tasks instead", ErrRefused, tr.Task().Name)
			}
		}
	}
	var errs structs.MultiError
	for _, tr := range ar.order {
		if err := tr.Restart(); err != nil && !errors.Is(err, taskrunner.ErrTaskNotRunning) {
			errs.Add(fmt.Errorf("failed to restart task %s: %w", tr.Task().Name, err))
		}
	}
	return errs.ErrorOrNil()
}

// Signal sends signal to one task, or to every task when task is "";
// as in Nomad, a task that is not running makes it fail.
func (ar *AllocRunner) Signal(task, signal string) error {
	if task != "" {
		tr := ar.tasks[task]
		if tr == nil {
			return fmt.Errorf("%w: %q", ErrUnknownTask, task)
		}
		return tr.Signal(signal)
	}
	var errs structs.MultiError
	for _, tr := range ar.order {
		if err := tr.Signal(signal); err != nil {
			errs.Add(fmt.Errorf("Failed to signal task: %s, err: %w", tr.Task().Name, err))
		}
	}
	return errs.ErrorOrNil()
}
