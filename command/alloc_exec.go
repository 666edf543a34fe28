package command

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/hashicorp/nomad/api"
	"golang.org/x/term"
)

const allocExecUsage = `
Usage: nomad alloc exec [options] <allocation> <command> [<args>...]
Alias: nomad exec

  Run a command inside a running task of an allocation. The command's exit
  code becomes this command's. With ACLs on, it needs the alloc-exec,
  read-job and list-jobs capabilities in the allocation's namespace.

  -task <task>  The task to run the command in; required when the
                allocation has more than one task.
  -job          The first argument is a job ID or prefix: run in a random
                allocation of the job (a running one when there is one).
  -group <name> With -job, pick the allocation among those of this task
                group.
  -i            Pass stdin to the command (default true; -i=false to not).
  -t            Allocate a pseudo-terminal (default: when stdin is one).
                -it and -ti are -i -t.
  -e <char>     The escape character of a session with a pseudo-terminal
                (default '~'). At the start of a line, the escape
                character followed by '.' closes the connection; twice, it
                sends itself. 'none' disables escapes.
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
		byJob    bool
		task     string
		group    string
		escape   string
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
	fs.BoolVar(&byJob, "job", false, "Use a random allocation of the job ID or prefix")
	fs.StringVar(&group, "group", "", "With -job, the task group of the allocation")
	fs.StringVar(&escape, "e", "~", "The escape character of a pseudo-terminal session")
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
		if byJob {
			fmt.Fprintln(s.Stderr, "A job ID is required")
		} else {
			fmt.Fprintln(s.Stderr, "An allocation ID is required")
		}
		return 1
	}
	if group != "" && !byJob {
		fmt.Fprintf(s.Stderr, "-group %q needs -job: it picks the task group of the job's random allocation\n", group)
		return 1
	}
	if !byJob && len(fs.Arg(0)) == 1 {
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
	if escape == "none" {
		escape = ""
	}
	if len(escape) > 1 {
		fmt.Fprintf(s.Stderr, "-e requires 'none' or a single character, got %q\n", escape)
		return 1
	}
	var client *api.Client
	var alloc *api.Allocation
	var err error
	if byJob {
		client, alloc, err = randomJobAlloc(&af, fs.Arg(0), group)
	} else {
		client, alloc, err = connectAlloc(&af, fs.Arg(0))
	}
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
	code, err := execInAlloc(client, alloc, task, ttyOpt, escape, fs.Args()[1:], stdin, s)
	if err != nil {
		fmt.Fprintf(s.Stderr, "failed to exec into task: %v\n", err)
		return 1
	}
	return code
}

// execInAlloc runs the session; with a terminal on stdin it is put in raw
// mode for the session and its size changes are passed on. A session
// with a pseudo-terminal reads escape (when not "") at line starts.
func execInAlloc(client *api.Client, alloc *api.Allocation, task string, tty bool, escape string, command []string, stdin io.Reader, s Streams) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := s.Stdout, s.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	sizeCh := make(chan api.TerminalSize, 1)
	restore := func() {}
	if fd, ok := stdinTerminal(stdin); ok && tty {
		state, err := term.MakeRaw(fd)
		if err != nil {
			return -1, err
		}
		var once sync.Once
		restore = func() { once.Do(func() { _ = term.Restore(fd, state) }) }
		defer restore()
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
	if tty && escape != "" {
		stdin = newEscapeReader(stdin, escape[0], func(c byte) bool {
			if c != '.' {
				return false
			}
			restore()
			fmt.Fprint(stderr, "\nConnection closed\n")
			cancel()
			return true
		})
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
	return client.Allocations().Exec(ctx, alloc, task, tty, command, stdin, stdout, stderr, sizeCh, &api.QueryOptions{Namespace: alloc.Namespace})
}

// randomJobAlloc picks the allocation of `alloc exec -job`, as Nomad's CLI
// does: the job by ID or prefix, then a random allocation of it (of the
// group, when given), a running one when there is one.
func randomJobAlloc(af *apiFlags, prefix, group string) (*api.Client, *api.Allocation, error) {
	client, err := af.client()
	if err != nil {
		return nil, nil, err
	}
	jobID, ns := prefix, ""
	stub, err := resolveJob(client, prefix)
	switch {
	case err == nil:
		jobID, ns = stub.ID, stub.Namespace
	case responseStatus(err) == http.StatusForbidden:
		// A token that may not list jobs may still read this one by ID.
	default:
		if amb, ok := err.(*errAmbiguous); ok {
			return nil, nil, fmt.Errorf("%s", amb.msg)
		}
		return nil, nil, err
	}
	allocs, _, err := client.Jobs().Allocations(jobID, false, &api.QueryOptions{Namespace: ns})
	if err != nil {
		return nil, nil, fmt.Errorf("Error fetching allocations: error querying job %q: %w", jobID, err)
	}
	if len(allocs) == 0 {
		return nil, nil, fmt.Errorf("Error fetching allocations: job %q doesn't exist or it has no allocations", jobID)
	}
	if group != "" {
		var inGroup []*api.AllocationListStub
		for _, a := range allocs {
			if a.TaskGroup == group {
				inGroup = append(inGroup, a)
			}
		}
		if len(inGroup) == 0 {
			return nil, nil, fmt.Errorf("Error fetching allocations: task group %q doesn't exist or it has no allocations", group)
		}
		allocs = inGroup
	}
	var running []*api.AllocationListStub
	for _, a := range allocs {
		if a.ClientStatus == api.AllocClientStatusRunning {
			running = append(running, a)
		}
	}
	if len(running) > 0 {
		allocs = running
	}
	pick := allocs[rand.IntN(len(allocs))]
	alloc, _, err := client.Allocations().Info(pick.ID, &api.QueryOptions{Namespace: pick.Namespace})
	if err != nil {
		return nil, nil, fmt.Errorf("Error querying allocation: %s", err)
	}
	return client, alloc, nil
}
