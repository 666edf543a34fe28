package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

const jobAllocsUsage = `
Usage: nomad job allocs [options] <job>

  Display the allocations of a job.
`

func runJobAllocs(args []string, s Streams) int {
	var (
		af                   apiFlags
		all, verbose, asJSON bool
		tmpl                 string
	)
	fs := newFlagSet("job allocs", s.Stderr, jobAllocsUsage)
	af.register(fs)
	fs.BoolVar(&all, "all", false, "Display all allocations matching the job ID, even those from an older instance of the job")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	fs.BoolVar(&asJSON, "json", false, "Output the allocations in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the allocations using a Go template")
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
	q := &api.QueryOptions{Namespace: stub.Namespace}
	// The job is only needed for the max_run_duration deadline column.
	job, _, _ := client.Jobs().Info(stub.ID, q)
	allocs, _, err := client.Jobs().Allocations(stub.ID, all, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving allocations: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, allocs); done {
		return code
	}
	if len(allocs) == 0 {
		fmt.Fprintln(s.Stdout, "No allocations placed")
		return 0
	}
	fmt.Fprintln(s.Stdout, withJobAllocDeadlines(formatAllocListStubs(allocs, verbose), job, allocs, verbose))
	return 0
}
