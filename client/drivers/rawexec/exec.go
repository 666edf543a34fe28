package rawexec

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"

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
	if n := tc.Network; n != nil {
		// The command joins the task's namespaces: the alloc's network,
		// and the mount and UTS ones that show its hosts, resolv.conf and
		// hostname. A Go program cannot join a mount namespace (setns
		// refuses a multithreaded caller), so nsenter does.
		nsenter, err := exec.LookPath("nsenter")
		if err != nil {
			return 0, fmt.Errorf("%w: raw_exec tasks of a bridge, cni or none network need nsenter (util-linux) on the client: %v", drivers.ErrExecNotSupported, err)
		}
		pid, err := d.TaskPid(tc.ID)
		if err != nil {
			return 0, err
		}
		args := []string{"--target", strconv.Itoa(pid), "--net"}
		if n.HostsFile != "" || n.ResolvConf != "" {
			args = append(args, "--mount")
		}
		if n.Hostname != "" {
			args = append(args, "--uts")
		}
		cmd = exec.CommandContext(ctx, nsenter, append(append(args, "--"), opts.Command...)...)
	}
	cmd.Dir = tc.TaskDir
	cmd.Env = buildEnv(tc.Env)
	return executor.RunCommand(ctx, cmd, opts)
}
