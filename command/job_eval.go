package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const jobEvalUsage = `
Usage: nomad job eval [options] <job>

  Force an evaluation of a job: the scheduler looks at the job again and
  places what is missing. With -force-reschedule, failed allocations are
  rescheduled even when their reschedule policy would not yet allow it.
`

func runJobEval(args []string, s Streams) int {
	var (
		af                     apiFlags
		force, detach, verbose bool
	)
	fs := newFlagSet("job eval", s.Stderr, jobEvalUsage)
	af.register(fs)
	fs.BoolVar(&force, "force-reschedule", false, "Force reschedule failed allocations even if they are not currently eligible for rescheduling")
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the evaluation")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <job>")
		return 1
	}
	client, stub, ok := clientForJob(&af, fs.Arg(0), s)
	if !ok {
		return 1
	}
	w := &api.WriteOptions{Namespace: stub.Namespace}
	evalID, _, err := client.Jobs().EvaluateWithOpts(stub.ID, api.EvalOptions{ForceReschedule: force}, w)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error evaluating job: %s\n", err)
		return 1
	}
	if detach {
		fmt.Fprintf(s.Stdout, "Created eval ID: %q \n", shortID(evalID, verbose))
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(evalID)
}
