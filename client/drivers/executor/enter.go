package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// EnterArg is the hidden first argument that turns the nomad binary into
// the enter step of a command exec'd into a task: it joins the task's
// cgroup and then becomes the command, so nothing of the command runs
// outside the cgroup, even for an instant.
const EnterArg = "task-enter"

// EnterCommand returns the command that runs argv (a program and its
// arguments) in the cgroup of the task's run. A run without a cgroup runs
// argv as it is.
func (e *Executor) EnterCommand(ctx context.Context, id string, argv []string) (*exec.Cmd, error) {
	t, err := e.get(id)
	if err != nil {
		return nil, err
	}
	if len(t.state.Cgroup) == 0 {
		return exec.CommandContext(ctx, argv[0], argv[1:]...), nil
	}
	exe := e.executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, e.errorf("find own executable for the enter step: %w", err)
		}
	}
	paths, err := json.Marshal(t.state.Cgroup)
	if err != nil {
		return nil, err
	}
	return exec.CommandContext(ctx, exe, append([]string{EnterArg, string(paths)}, argv...)...), nil
}

// runEnter joins the cgroup at the JSON paths and execs argv.
func runEnter(pathsJSON string, argv []string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "enter task: %v\n", err)
		return 126
	}
	if len(argv) == 0 {
		return fail(fmt.Errorf("no command"))
	}
	var paths map[string]string
	if err := json.Unmarshal([]byte(pathsJSON), &paths); err != nil {
		return fail(fmt.Errorf("cgroup paths: %w", err))
	}
	if err := joinCgroup(paths, os.Getpid()); err != nil {
		return fail(err)
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(err)
	}
	return fail(syscall.Exec(prog, argv, os.Environ()))
}
