package client

import (
	"context"
	"fmt"

	"github.com/nomadq/nomadq/client/drivers"
)

// RestartAlloc restarts a task of a running allocation, its running tasks
// (task "") or all its tasks (allTasks).
func (c *Client) RestartAlloc(allocID, task string, allTasks bool) error {
	ar, err := c.runner(allocID)
	if err != nil {
		return err
	}
	return ar.Restart(task, allTasks)
}

// SignalAlloc sends signal to a task of an allocation, or to all its tasks
// (task "").
func (c *Client) SignalAlloc(allocID, task, signal string) error {
	ar, err := c.runner(allocID)
	if err != nil {
		return err
	}
	return ar.Signal(task, signal)
}

// ExecAlloc runs a command inside a running task of an allocation and
// returns its exit code.
func (c *Client) ExecAlloc(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (int, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return 0, err
	}
	tr := ar.TaskRunner(task)
	if tr == nil {
		return 0, fmt.Errorf("task %q not found in allocation %q", task, allocID)
	}
	return tr.Exec(ctx, opts)
}
