package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const systemGCUsage = `
Usage: nomad system gc [options]

  Run the garbage collection of jobs, evaluations, allocations and nodes
  now, without waiting for their thresholds.
`

const systemReconcileSummariesUsage = `
Usage: nomad system reconcile summaries [options]

  Recompute the summaries of all registered jobs from their allocations.
`

func runSystemGC(args []string, s Streams) int {
	return runSystemAction("system gc", systemGCUsage, args, s, "Error running system garbage-collection",
		func(c *api.Client) error { return c.System().GarbageCollect() })
}

func runSystemReconcileSummaries(args []string, s Streams) int {
	return runSystemAction("system reconcile summaries", systemReconcileSummariesUsage, args, s, "Error running system summary reconciliation",
		func(c *api.Client) error { return c.System().ReconcileSummaries() })
}

// runSystemAction runs a system command that takes no arguments and says
// nothing on success, as Nomad's do.
func runSystemAction(name, usage string, args []string, s Streams, errPrefix string, do func(*api.Client) error) int {
	var af apiFlags
	fs := newFlagSet(name, s.Stderr, usage)
	af.register(fs)
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	if err := do(client); err != nil {
		fmt.Fprintf(s.Stderr, "%s: %s\n", errPrefix, err)
		return 1
	}
	return 0
}
