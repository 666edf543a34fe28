package docker

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
	"github.com/nomadq/nomadq/client/drivers"
)

// ExecTask runs a command inside the task's container (docker exec), as
// the task's user, with the task's environment, and returns its exit
// code once its output is written.
func (d *Driver) ExecTask(ctx context.Context, tc *drivers.TaskConfig, opts *drivers.ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("docker: no command to run")
	}
	t, err := d.get(tc.ID)
	if err != nil {
		return 0, err
	}
	created, err := d.client.ExecCreate(ctx, t.containerID, client.ExecCreateOptions{
		User:         tc.User,
		TTY:          opts.Tty,
		AttachStdin:  opts.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          drivers.IsolatedEnv(tc.Env, nil),
		Cmd:          opts.Command,
	})
	if err != nil {
		return 0, fmt.Errorf("docker: exec in container %s: %w", shortID(t.containerID), err)
	}
	att, err := d.client.ExecAttach(ctx, created.ID, client.ExecAttachOptions{TTY: opts.Tty})
	if err != nil {
		return 0, fmt.Errorf("docker: attach to exec in container %s: %w", shortID(t.containerID), err)
	}
	defer att.Close()
	// A cancelled context closes the connection, which ends the copies.
	stopClose := context.AfterFunc(ctx, att.Close)
	defer stopClose()

	if opts.Tty && opts.Resize != nil {
		go func() {
			for size := range opts.Resize {
				_, _ = d.client.ExecResize(ctx, created.ID, client.ExecResizeOptions{Height: uint(size.Height), Width: uint(size.Width)})
			}
		}()
	}
	if opts.Stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, opts.Stdin)
			if cw, ok := att.Conn.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
		}()
	}
	stdout, stderr := opts.Stdout, opts.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	if opts.Tty {
		_, err = io.Copy(stdout, att.Reader)
	} else {
		_, err = stdcopy.StdCopy(stdout, stderr, att.Reader)
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("docker: exec output: %w", err)
	}
	insp, err := d.client.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
	if err != nil {
		return 0, fmt.Errorf("docker: inspect exec: %w", err)
	}
	return insp.ExitCode, nil
}
