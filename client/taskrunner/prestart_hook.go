package taskrunner

import (
	"context"
	"errors"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// prestartRequest is what a prestart hook sees of the run about to start.
type prestartRequest struct {
	Task    *structs.Task
	TaskDir string
	// AllocDir is the allocation's directory, the parent of TaskDir.
	AllocDir string
	// Env is the task's environment so far; hooks read it, and return
	// additions in their response rather than writing to it.
	Env *TaskEnv
}

// prestartResponse carries what a hook adds to the run.
type prestartResponse struct {
	// Env is added to the task's environment.
	Env map[string]string
}

// prestartHook prepares the task directory before a run starts. Hooks
// run in order (artifacts before templates, so a template can read a
// fetched file); an error stops the run.
type prestartHook interface {
	Name() string
	Prestart(ctx context.Context, req *prestartRequest, resp *prestartResponse) error
}

// hookError is a prestart failure with the event that tells the user
// about it. The restart policy decides what follows, as in Nomad, where a
// failed prestart hook counts as a failed attempt.
type hookError struct {
	err   error
	event *structs.TaskEvent
}

func (e *hookError) Error() string { return e.err.Error() }
func (e *hookError) Unwrap() error { return e.err }

// runPrestartHooks runs the hooks in order and merges what they add to
// the environment into env.
func (tr *TaskRunner) runPrestartHooks(ctx context.Context, env *TaskEnv) error {
	req := &prestartRequest{
		Task:     tr.cfg.Task,
		TaskDir:  tr.cfg.AllocDir.TaskDir(tr.cfg.Task.Name),
		AllocDir: tr.cfg.AllocDir.Dir,
		Env:      env,
	}
	for _, h := range tr.hooks {
		resp := &prestartResponse{}
		if err := h.Prestart(ctx, req, resp); err != nil {
			return err
		}
		for k, v := range resp.Env {
			env.Env[k] = v
		}
	}
	return nil
}

// prestartFailed records a prestart hook's failure and applies the
// restart policy to it as to a failed run; true means try another run.
func (tr *TaskRunner) prestartFailed(err error) bool {
	e := NewEvent(structs.TaskHookFailed)
	e.Message = err.Error()
	var he *hookError
	if errors.As(err, &he) {
		e = he.event
	}
	tr.update("", e, nil)
	return tr.applyRestartPolicy(&drivers.ExitResult{ExitCode: -1, Err: err})
}
