package exec

import (
	"context"
	"errors"
	"fmt"
	osexec "os/exec"
	"os/user"
	"strconv"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/executor"
)

// ExecTask runs a command inside the task's isolation: in the mount
// namespace and chroot of the task's main process (and its PID and IPC
// namespaces when they are private), in its working directory, as the
// task's user, with the task's environment. A Go program cannot join a
// mount namespace (setns refuses a multithreaded caller), so the join is
// made by nsenter from util-linux, a single-threaded program. The command
// runs in the task's cgroup, so the task's limits and stats include it.
func (d *Driver) ExecTask(ctx context.Context, tc *drivers.TaskConfig, opts *drivers.ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("exec: no command to run")
	}
	c, err := parse(tc.Config)
	if err != nil {
		return 0, err
	}
	nsenter, err := osexec.LookPath("nsenter")
	if err != nil {
		return 0, fmt.Errorf("%w: exec tasks need nsenter (util-linux) on the client: %v", drivers.ErrExecNotSupported, err)
	}
	pid, err := d.TaskPid(tc.ID)
	if err != nil {
		return 0, err
	}
	name := tc.User
	if name == "" {
		name = defaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return 0, fmt.Errorf("exec: look up user %q: %w", name, err)
	}
	args := []string{"--target", strconv.Itoa(pid), "--mount"}
	if c.pidMode == "private" {
		args = append(args, "--pid")
	}
	if c.ipcMode == "private" {
		args = append(args, "--ipc")
	}
	if n := tc.Network; n != nil {
		// The alloc's network namespace, and the hostname's.
		args = append(args, "--net")
		if n.Hostname != "" {
			args = append(args, "--uts")
		}
	}
	// Bare --root and --wd take the target process's root and directory.
	args = append(args, "--root", "--wd")
	if u.Uid != "0" {
		args = append(args, "--setuid", u.Uid, "--setgid", u.Gid)
	}
	args = append(append(args, "--"), opts.Command...)
	cmd, err := d.EnterCommand(ctx, tc.ID, append([]string{nsenter}, args...))
	if err != nil {
		return 0, err
	}
	cmd.Env = taskEnv(tc.Env)
	return executor.RunCommand(ctx, cmd, opts)
}
