package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/nomad/api"
	"golang.org/x/term"
)

const allocExecUsage = `
Usage: nomad alloc exec [options] <allocation> <command> [<args>...]
Alias: nomad exec

  Run a command inside a running task of an allocation. The command's exit
  code becomes this command's.

  -task <task>  The task to run the command in; required when the
                allocation has more than one task.
  -i            Pass stdin to the command (default true; -i=false to not).
  -t            Allocate a pseudo-terminal (default: when stdin is one).
                -it and -ti are -i -t.
`

// stdinTerminal returns stdin's descriptor when it is a terminal.
func stdinTerminal(r io.Reader) (int, bool) {
	f, ok := r.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	return int(f.Fd()), true
}

func runAllocExec(args []string, s Streams) int {
	var (
		af       apiFlags
		stdinOpt bool
		ttyOpt   bool
		task     string
	)
	stdin := s.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	_, isTTY := stdinTerminal(stdin)
	fs := newFlagSet("alloc exec", s.Stderr, allocExecUsage)
	af.register(fs)
	fs.BoolVar(&stdinOpt, "i", true, "Pass stdin to the command")
	fs.BoolVar(&ttyOpt, "t", isTTY, "Allocate a pseudo-terminal")
	fs.StringVar(&task, "task", "", "The task to run the command in")
	expanded := make([]string, 0, len(args))
	for _, a := range args {
		if a == "-it" || a == "-ti" {
			expanded = append(expanded, "-i", "-t")
			continue
		}
		expanded = append(expanded, a)
	}
	if err := fs.Parse(expanded); err != nil {
		return 1
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(s.Stderr, "An allocation ID is required")
		return 1
	}
	if len(fs.Arg(0)) == 1 {
		fmt.Fprintln(s.Stderr, "Alloc ID must contain at least two characters")
		return 1
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(s.Stderr, "A command is required")
		return 1
	}
	if ttyOpt && !stdinOpt {
		fmt.Fprintln(s.Stderr, "-i must be enabled if running with tty")
		return 1
	}
	client, alloc, err := connectAlloc(&af, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if task != "" {
		err = checkAllocTask(alloc, task)
	} else {
		task, err = onlyAllocTask(alloc)
	}
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if !stdinOpt {
		stdin = bytes.NewReader(nil)
	}
	code, err := execInAlloc(client, alloc, task, ttyOpt, fs.Args()[1:], stdin, s)
	if err != nil {
		fmt.Fprintf(s.Stderr, "failed to exec into task: %v\n", err)
		return 1
	}
	return code
}

// execInAlloc runs the session; with a terminal on stdin it is put in raw
// mode for the session and its size changes are passed on.
func execInAlloc(client *api.Client, alloc *api.Allocation, task string, tty bool, command []string, stdin io.Reader, s Streams) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sizeCh := make(chan api.TerminalSize, 1)
	if fd, ok := stdinTerminal(stdin); ok && tty {
		state, err := term.MakeRaw(fd)
		if err != nil {
			return -1, err
		}
		defer term.Restore(fd, state)
		sendSize := func() {
			if w, h, err := term.GetSize(fd); err == nil {
				select {
				case sizeCh <- api.TerminalSize{Height: h, Width: w}:
				default:
				}
			}
		}
		sendSize()
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-winch:
					sendSize()
				}
			}
		}()
	}
	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigCh)
	go func() {
		select {
		case <-sigCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	stdout, stderr := s.Stdout, s.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	return client.Allocations().Exec(ctx, alloc, task, tty, command, stdin, stdout, stderr, sizeCh, &api.QueryOptions{Namespace: alloc.Namespace})
}
