package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const allocStopUsage = `
Usage: nomad alloc stop [options] <allocation>

  Stop an existing allocation. The allocation is shut down and then
  rescheduled. An interactive monitoring session shows the rescheduling
  evaluation; it is safe to exit it early with ctrl-c.

  -detach             Return immediately and print the evaluation ID.
  -no-shutdown-delay  Ignore the group and task shutdown_delay.
  -verbose            Show full information.
`

func runAllocStop(args []string, s Streams) int {
	var (
		af                               apiFlags
		detach, verbose, noShutdownDelay bool
	)
	fs := newFlagSet("alloc stop", s.Stderr, allocStopUsage)
	af.register(fs)
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring")
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.BoolVar(&noShutdownDelay, "no-shutdown-delay", false, "Ignore the group and task shutdown_delay")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <alloc-id>")
		return 1
	}
	client, alloc, err := connectAlloc(&af, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	opts := &api.QueryOptions{Namespace: alloc.Namespace, Params: map[string]string{}}
	if alloc.Job != nil && alloc.Job.Type != nil && *alloc.Job.Type == api.JobTypeBatch {
		opts.Params["reschedule"] = "true"
	}
	if noShutdownDelay {
		opts.Params["no_shutdown_delay"] = "true"
	}
	resp, err := client.Allocations().Stop(alloc, opts)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error stopping allocation: %s\n", err)
		return 1
	}
	if detach {
		fmt.Fprintln(s.Stdout, resp.EvalID)
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(resp.EvalID)
}
