package rawexec

import (
	"context"
	"errors"
	"os/exec"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/executor"
)

// ExecTask runs a command as the task runs: in its task directory, with
// the client's environment and the task's on top, as the client's user.
func (d *Driver) ExecTask(ctx context.Context, tc *drivers.TaskConfig, opts *drivers.ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("raw_exec: no command to run")
	}
	cmd := exec.CommandContext(ctx, opts.Command[0], opts.Command[1:]...)
	cmd.Dir = tc.TaskDir
	cmd.Env = buildEnv(tc.Env)
	return executor.RunCommand(ctx, cmd, opts)
}
