package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const jobPeriodicForceUsage = `
Usage: nomad job periodic force [options] <job>

  Launch a child of a periodic job now, regardless of its schedule and of
  prohibit_overlap. Unless -detach is given, the command monitors the
  evaluation of the launched child.
`

func runJobPeriodicForce(args []string, s Streams) int {
	var (
		af      apiFlags
		detach  bool
		verbose bool
	)
	fs := newFlagSet("job periodic force", s.Stderr, jobPeriodicForceUsage)
	af.register(fs)
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the evaluation")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	client, ok := parseOneArg(fs, &af, args, "<job>", s)
	if !ok {
		return 1
	}
	stub, err := resolveJob(client, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if !stub.Periodic {
		fmt.Fprintf(s.Stderr, "Job %q is not periodic\n", stub.ID)
		return 1
	}
	evalID, _, err := client.Jobs().PeriodicForce(stub.ID, &api.WriteOptions{Namespace: stub.JobSummary.Namespace})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error forcing periodic job %q: %s\n", stub.ID, err)
		return 1
	}
	if detach {
		fmt.Fprintln(s.Stdout, "Force periodic successful")
		fmt.Fprintf(s.Stdout, "Evaluation ID: %s\n", evalID)
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(evalID)
}
