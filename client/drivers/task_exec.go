package drivers

import (
	"context"
	"errors"
	"io"
)

// ErrExecNotSupported is returned for a command run in a task whose driver
// cannot run commands inside its tasks.
var ErrExecNotSupported = errors.New("exec is not supported by this task's driver")

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Height int
	Width  int
}

// ExecOptions is one command to run inside a running task.
type ExecOptions struct {
	// Command is the program and its arguments.
	Command []string
	// Tty runs the command on a pseudo-terminal: stdin, stdout and stderr
	// are the terminal, and Stderr is not used.
	Tty bool

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Resize carries terminal size changes; only read with Tty.
	Resize <-chan TerminalSize
}

// TaskExecer is a driver that runs commands inside its running tasks,
// in the task's directory and environment (its isolation, where it has
// one).
type TaskExecer interface {
	// ExecTask runs opts.Command in the context of the task started with
	// tc and returns its exit code once it has exited and its output is
	// written. Cancelling ctx kills the command.
	ExecTask(ctx context.Context, tc *TaskConfig, opts *ExecOptions) (int, error)
}

// TaskSignaler is a driver that delivers signals to its running tasks.
type TaskSignaler interface {
	// SignalTask sends signal (a name like "SIGUSR1") to the task's
	// main process.
	SignalTask(taskID string, signal string) error
}
