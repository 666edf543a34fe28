package taskrunner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
)

// writeDispatchPayload writes a dispatched job's payload to
// local/<file> of a task that has a dispatch_payload block. A task
// without the block, or a job without a payload, gets no file.
func writeDispatchPayload(dir *allocdir.AllocDir, task *structs.Task, alloc *structs.Allocation) error {
	if task.DispatchPayload == nil || task.DispatchPayload.File == "" || alloc == nil || alloc.Job == nil || dir == nil {
		return nil
	}
	local := dir.LocalDir(task.Name)
	path := filepath.Join(local, task.DispatchPayload.File)
	if rel, err := filepath.Rel(local, path); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("dispatch_payload file %q escapes the task's local directory", task.DispatchPayload.File)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write dispatch payload: %w", err)
	}
	if err := os.WriteFile(path, alloc.Job.Payload, 0o644); err != nil {
		return fmt.Errorf("write dispatch payload: %w", err)
	}
	return nil
}

// setupFailed ends the task with a setup failure that fails the task.
func (tr *TaskRunner) setupFailed(err error) {
	e := NewEvent(structs.TaskSetupFailure)
	e.SetupError = err.Error()
	e.FailsTask = true
	tr.update(structs.TaskStateDead, e, nil)
}
