package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"github.com/nomadq/nomadq/client/drivers"
)

// RunCommand runs a command a user execs into a task, prepared by the
// driver (directory, environment, namespaces), with opts' streams: on a
// new pseudo-terminal when opts.Tty, with pipes otherwise. It returns the
// exit code once the command has exited and its output is written.
func RunCommand(ctx context.Context, cmd *exec.Cmd, opts *drivers.ExecOptions) (int, error) {
	if opts.Tty {
		return runOnTerminal(ctx, cmd, opts)
	}
	return runPiped(cmd, opts)
}

// runPiped runs cmd with pipes. Stdin is copied by hand: os/exec would
// make Wait wait for the copy, and a caller that never closes its input
// would keep an exited command from being reported.
func runPiped(cmd *exec.Cmd, opts *drivers.ExecOptions) (int, error) {
	cmd.Stdout, cmd.Stderr = opts.Stdout, opts.Stderr
	// Its own process group, so the command does not get the client's
	// terminal signals.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %q: %w", cmd.Args[0], err)
	}
	if opts.Stdin != nil {
		go func() {
			_, _ = io.Copy(stdin, opts.Stdin)
			stdin.Close()
		}()
	} else {
		stdin.Close()
	}
	return exitCode(cmd.Wait())
}

// runOnTerminal runs cmd as the session leader of a new pseudo-terminal.
func runOnTerminal(ctx context.Context, cmd *exec.Cmd, opts *drivers.ExecOptions) (int, error) {
	ptmx, err := pty.Start(cmd)
	if err != nil {
		return 0, fmt.Errorf("start %q on a terminal: %w", cmd.Args[0], err)
	}
	defer ptmx.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case sz, ok := <-opts.Resize:
				if !ok {
					return
				}
				_ = pty.Setsize(ptmx, &pty.Winsize{Rows: uint16(sz.Height), Cols: uint16(sz.Width)})
			}
		}
	}()
	if opts.Stdin != nil {
		go func() { _, _ = io.Copy(ptmx, opts.Stdin) }()
	}
	// The terminal's output ends (EIO) once every holder of its other
	// side, the command and anything it left behind, has closed it.
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(opts.Stdout, ptmx)
		close(copied)
	}()
	code, err := exitCode(cmd.Wait())
	select {
	case <-copied:
	case <-ctx.Done():
	}
	return code, err
}

// exitCode turns Wait's error into the command's exit code; a command
// killed by a signal exits with 128 plus the signal, as a shell reports it.
func exitCode(err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}
