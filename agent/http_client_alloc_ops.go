package agent

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/nomadq/nomadq/client/allocrunner"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/taskrunner"
)

// allocRestartBody is the api client's AllocationRestartRequest.
type allocRestartBody struct {
	TaskName string
	AllTasks bool
}

// allocSignalBody is the api client's AllocSignalRequest.
type allocSignalBody struct {
	Signal string
	Task   string
}

// decodeOptionalBody decodes a JSON body when there is one.
func decodeOptionalBody(r *http.Request, out any) error {
	if r.Body == nil {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return codedErr(http.StatusBadRequest, "Failed to read request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decodeBody(r, out)
}

// clientAllocRestart serves PUT/POST /v1/client/allocation/:id/restart.
func (h *httpHandler) clientAllocRestart(r *http.Request, t *allocTarget) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body allocRestartBody
	if err := decodeOptionalBody(r, &body); err != nil {
		return nil, err
	}
	if body.TaskName == "" {
		body.TaskName = r.URL.Query().Get("task")
	}
	if body.AllTasks && body.TaskName != "" {
		return nil, codedErr(http.StatusBadRequest, "TaskName %q and AllTasks cannot be set together: AllTasks restarts every task", body.TaskName)
	}
	if err := h.checkTask(t, body.TaskName); err != nil {
		return nil, err
	}
	if err := t.ce.RestartAlloc(t.alloc.ID, body.TaskName, body.AllTasks); err != nil {
		return nil, taskOpError(err)
	}
	return struct{ Index uint64 }{}, nil
}

// clientAllocSignal serves PUT/POST /v1/client/allocation/:id/signal.
func (h *httpHandler) clientAllocSignal(r *http.Request, t *allocTarget) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var body allocSignalBody
	if err := decodeOptionalBody(r, &body); err != nil {
		return nil, err
	}
	if body.Signal == "" {
		return nil, codedErr(http.StatusBadRequest, "Signal is required: name a signal such as SIGUSR1")
	}
	if _, err := drivers.ParseSignal(body.Signal); err != nil {
		return nil, codedErr(http.StatusBadRequest, "Signal %q is not a known signal: use a name such as SIGHUP, SIGUSR1 or SIGTERM", body.Signal)
	}
	if err := h.checkTask(t, body.Task); err != nil {
		return nil, err
	}
	if err := t.ce.SignalAlloc(t.alloc.ID, body.Task, body.Signal); err != nil {
		return nil, taskOpError(err)
	}
	return struct{ Index uint64 }{}, nil
}

// checkTask refuses a task name the alloc's group does not have.
func (h *httpHandler) checkTask(t *allocTarget, task string) error {
	if task == "" || t.alloc.Job == nil {
		return nil
	}
	tg := t.alloc.Job.LookupTaskGroup(t.alloc.TaskGroup)
	if tg == nil {
		return nil
	}
	names := make([]string, 0, len(tg.Tasks))
	for _, tk := range tg.Tasks {
		if tk.Name == task {
			return nil
		}
		names = append(names, tk.Name)
	}
	return codedErr(http.StatusBadRequest, "Task %q not found in allocation %q: its tasks are %s", task, t.alloc.ID, strings.Join(names, ", "))
}

// taskOpError maps a task operation's failure to its status: a task that
// is not running or an unknown task is the request's fault.
func taskOpError(err error) error {
	switch {
	case errors.Is(err, taskrunner.ErrTaskNotRunning), errors.Is(err, allocrunner.ErrUnknownTask),
		errors.Is(err, allocrunner.ErrRefused), errors.Is(err, drivers.ErrExecNotSupported):
		return codedErr(http.StatusBadRequest, "%v", err)
	}
	return codedErr(http.StatusInternalServerError, "%v", err)
}
