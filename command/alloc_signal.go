package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const allocSignalUsage = `
Usage: nomad alloc signal [options] <allocation> <task>

  Signal an existing allocation. Without a task, all of the allocation's
  tasks receive the signal.

  -s <signal>     The signal to send. Defaults to SIGKILL.
  -task <task>    The task to signal; preferred over the <task> argument.
  -verbose        Show full information.
`

func runAllocSignal(args []string, s Streams) int {
	var (
		af           apiFlags
		verbose      bool
		signal, task string
	)
	fs := newFlagSet("alloc signal", s.Stderr, allocSignalUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.StringVar(&signal, "s", "SIGKILL", "The signal to send")
	fs.StringVar(&task, "task", "", "The task to signal")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(s.Stderr, "This command takes up to two arguments: <alloc-id> <task>")
		return 1
	}
	client, alloc, err := connectAlloc(&af, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if task == "" {
		task = fs.Arg(1)
	}
	if task != "" {
		if err := checkAllocTask(alloc, task); err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
	}
	if err := client.Allocations().Signal(alloc, &api.QueryOptions{Namespace: alloc.Namespace}, task, signal); err != nil {
		fmt.Fprintf(s.Stderr, "Error signalling allocation: %s\n", err)
		return 1
	}
	return 0
}
