package command

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

const allocChecksUsage = `
Usage: nomad alloc checks [options] <allocation>

  Outputs the latest health check status information for services in the
  allocation using the Nomad service discovery provider.

  -verbose     Show full information.
  -json        Output the latest health check status information in a JSON
               format.
  -t <tmpl>    Format and display the latest health check status information
               using a Go template.
`

func runAllocChecks(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
		asJSON  bool
		tmpl    string
	)
	fs := newFlagSet("alloc checks", s.Stderr, allocChecksUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.BoolVar(&asJSON, "json", false, "Output in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format the output with a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	switch fs.NArg() {
	case 1:
	case 0:
		fmt.Fprintln(s.Stderr, "An allocation ID is required")
		return 1
	default:
		fmt.Fprintln(s.Stderr, "This command takes one argument (allocation ID)")
		return 1
	}
	client, alloc, err := connectAlloc(&af, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	checks, err := client.Allocations().Checks(alloc.ID, &api.QueryOptions{Namespace: alloc.Namespace})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying allocation checks: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, checks); done {
		return code
	}
	fmt.Fprintf(s.Stdout, "Status of %d Nomad Service Checks\n\n", len(checks))
	for _, c := range sortedChecks(checks) {
		task := c.Task
		if task == "" {
			task = "(group)"
		}
		rows := []string{
			"ID|=|" + c.ID,
			"Name|=|" + c.Check,
			"Group|=|" + c.Group,
			"Task|=|" + task,
			"Service|=|" + c.Service,
			"Status|=|" + c.Status,
		}
		if c.StatusCode > 0 {
			rows = append(rows, "StatusCode|=|"+strconv.Itoa(c.StatusCode))
		}
		rows = append(rows,
			"Mode|=|"+c.Mode,
			"Timestamp|=|"+formatTime(time.Unix(c.Timestamp, 0)),
			"Output|=|"+c.Output,
		)
		fmt.Fprintln(s.Stdout, formatList(rows))
		fmt.Fprintln(s.Stdout)
	}
	return 0
}

// sortedChecks orders checks by service, task and check name, so the
// output is the same from one run to the next.
func sortedChecks(in api.AllocCheckStatuses) []api.AllocCheckStatus {
	out := make([]api.AllocCheckStatus, 0, len(in))
	for _, c := range in {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		return a.ID < b.ID
	})
	return out
}
