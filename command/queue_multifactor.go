package command

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/hashicorp/nomad/api"
)

const queuePriorityUsage = `
Usage: nomad queue priority [options] [<job>...]

  Display the effective priority of the jobs waiting in the batch queue
  and the weighted factors that add up to it (priority, age, fair share,
  job size), in release order, as Slurm's sprio does; with jobs named,
  only those. -namespace (or NOMAD_NAMESPACE) narrows the listing to one
  namespace, as for nomad queue jobs. The
  queue's order must be "multifactor": the other orders have no effective
  priority.
`

func runQueuePriority(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("queue priority", s.Stderr, queuePriorityUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the entries in their JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the entries using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	var status queueStatusBody
	if _, err := client.Raw().Query("/v1/queue", &status, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error querying the batch queue: %v\n", err)
		return 1
	}
	if status.Config.Order != "multifactor" {
		fmt.Fprintf(s.Stderr, "Error: the batch queue's order is %q; effective priorities exist only in the \"multifactor\" order\n", status.Config.Order)
		return 1
	}
	entries, err := listQueue(client)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying the batch queue: %v\n", err)
		return 1
	}
	wanted := fs.Args()
	var waiting []queueEntry
	for _, e := range entries {
		if e.Factors == nil {
			continue // released: it no longer waits for its rank
		}
		if len(wanted) > 0 && !slices.Contains(wanted, e.JobID) {
			continue
		}
		waiting = append(waiting, e)
	}
	for _, id := range wanted {
		if !slices.ContainsFunc(waiting, func(e queueEntry) bool { return e.JobID == id }) {
			fmt.Fprintf(s.Stderr, "Error: job %q is not waiting in the batch queue\n", id)
			return 1
		}
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, waiting); done {
		return code
	}
	if len(waiting) == 0 {
		fmt.Fprintln(s.Stdout, "No jobs waiting in the batch queue")
		return 0
	}
	rows := []string{"Position|Namespace|Job ID|Effective Priority|Priority|Age|FairShare|JobSize"}
	for _, e := range waiting {
		f := e.Factors
		rows = append(rows, fmt.Sprintf("%d|%s|%s|%s|%s|%s|%s|%s", e.Position, e.Namespace, e.JobID,
			num(e.EffectivePriority), num(f.Priority), num(f.Age), num(f.FairShare), num(f.JobSize)))
	}
	fmt.Fprintln(s.Stdout, formatList(rows))
	return 0
}

// num shows a factor with two decimals.
func num(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// queueUsageRow is one row of GET /v1/queue/usage.
type queueUsageRow struct {
	Namespace       string
	Weight          float64
	Usage           float64
	NormalizedUsage float64
	NormalizedShare float64
	FairShare       float64
	ResetTime       int64
}

const queueUsageUsage = `
Usage: nomad queue usage [options]

  Display each namespace's decayed batch usage as the multifactor order
  weighs it, as Slurm's sshare does: its batch_queue_weight, its usage
  (its batch allocations' dominant share of the cluster times the seconds
  they ran, each second counting half as much every usage_half_life), its
  part of all usage and of all weights, and its fair-share factor
  2^(-normalized usage / normalized share).

  -reset <namespace> forgets that namespace's usage up to now, through
  Raft; it needs operator write.
`

func runQueueUsage(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
		reset  string
	)
	fs := newFlagSet("queue usage", s.Stderr, queueUsageUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the usage in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the usage using a Go template")
	fs.StringVar(&reset, "reset", "", "Reset the named namespace's usage")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	if isSet(fs, "reset") {
		if reset == "" {
			fmt.Fprintln(s.Stderr, "Invalid -reset \"\": name the namespace whose usage to reset")
			return 1
		}
		var out struct{ Index uint64 }
		if _, err := client.Raw().Write("/v1/queue/usage/reset", nil, &out, &api.WriteOptions{Namespace: reset}); err != nil {
			fmt.Fprintf(s.Stderr, "Error resetting the usage of namespace %q: %s\n", reset, err)
			return 1
		}
		fmt.Fprintf(s.Stdout, "Usage of namespace %q reset\n", reset)
		return 0
	}
	var rows []queueUsageRow
	if _, err := client.Raw().Query("/v1/queue/usage", &rows, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error querying the batch queue usage: %v\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, rows); done {
		return code
	}
	out := []string{"Namespace|Weight|Usage|Normalized Usage|Normalized Share|Fair Share|Reset"}
	for _, r := range rows {
		resetAt := "-"
		if r.ResetTime > 0 {
			resetAt = formatUnixNano(r.ResetTime)
		}
		out = append(out, fmt.Sprintf("%s|%g|%s|%s|%s|%s|%s", r.Namespace, r.Weight, num(r.Usage),
			strconv.FormatFloat(r.NormalizedUsage, 'f', 4, 64), strconv.FormatFloat(r.NormalizedShare, 'f', 4, 64),
			strconv.FormatFloat(r.FairShare, 'f', 4, 64), resetAt))
	}
	fmt.Fprintln(s.Stdout, formatList(out))
	return 0
}
