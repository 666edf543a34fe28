package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const allocRestartUsage = `
Usage: nomad alloc restart [options] <allocation> <task>

  Restart an existing allocation's tasks. Without a task, every task of
  the allocation that is running is restarted.

  -all-tasks      Restart all tasks of the allocation. Not allowed with
                  -task or the <task> argument.
  -task <task>    The task to restart; preferred over the <task> argument.
  -verbose        Show full information.
`

func runAllocRestart(args []string, s Streams) int {
	var (
		af                apiFlags
		allTasks, verbose bool
		task              string
	)
	fs := newFlagSet("alloc restart", s.Stderr, allocRestartUsage)
	af.register(fs)
	fs.BoolVar(&allTasks, "all-tasks", false, "Restart all tasks of the allocation")
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.StringVar(&task, "task", "", "The task to restart")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(s.Stderr, "This command takes one or two arguments: <alloc-id> <task-name>")
		return 1
	}
	if task == "" {
		task = fs.Arg(1)
	}
	if allTasks && task != "" {
		fmt.Fprintln(s.Stderr, "The -all-tasks option is not allowed when restarting a specific task.")
		return 1
	}
	client, alloc, err := connectAlloc(&af, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if task != "" {
		if err := checkAllocTask(alloc, task); err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
	}
	q := &api.QueryOptions{Namespace: alloc.Namespace}
	if allTasks {
		err = client.Allocations().RestartAllTasks(alloc, q)
	} else {
		err = client.Allocations().Restart(alloc, task, q)
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to restart allocation:\n\n%s\n", err)
		return 1
	}
	return 0
}
