package command

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// queueEntry is one row of GET /v1/queue/jobs; the official api client
// has no batch queue types, so the CLI keeps its own.
type queueEntry struct {
	Position    int
	Namespace   string
	JobID       string
	EvalID      string
	Priority    int
	Status      string
	Reason      string
	EnqueueTime int64
	ReleaseTime int64
	// ReasonDetail is Reason, a bare code (Priority, Resources, Held,
	// ...), in words.
	ReasonDetail string
	// EstimatedStart is unix nanoseconds, 0 when unknown.
	EstimatedStart int64
	// EffectivePriority and Factors are set on waiting entries in the
	// multifactor order.
	EffectivePriority float64
	Factors           *queueFactors
}

// reasonWords is why the entry is where it is, in words: the queue's
// detail, or the code when the server gave none.
func (e *queueEntry) reasonWords() string {
	if e.ReasonDetail != "" {
		return e.ReasonDetail
	}
	return e.Reason
}

// queueFactors are the weighted factors of a waiting entry's effective
// priority.
type queueFactors struct {
	Priority  float64
	Age       float64
	FairShare float64
	JobSize   float64
}

// queueStatusBody is the body of GET /v1/queue.
type queueStatusBody struct {
	Config struct {
		Enabled              bool
		Order                string
		ConcurrentPlacements int
		WorkloadTimeout      time.Duration
		Backfill             bool
	}
	Depth   map[string]int
	Placing []queueEntry
}

const queueStatusUsage = `
Usage: nomad queue status [options]

  Display the batch job queue: its settings, the number of workloads by
  status and the workloads being placed.
`

func runQueueStatus(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("queue status", s.Stderr, queueStatusUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the queue status in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the queue status using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	var body queueStatusBody
	if _, err := client.Raw().Query("/v1/queue", &body, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error querying the batch queue: %v\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, body); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatKV([]string{
		"Enabled|" + strconv.FormatBool(body.Config.Enabled),
		"Order|" + body.Config.Order,
		"Concurrent Placements|" + strconv.Itoa(body.Config.ConcurrentPlacements),
		"Workload Timeout|" + body.Config.WorkloadTimeout.String(),
		"Backfill|" + strconv.FormatBool(body.Config.Backfill),
		"Queued|" + strconv.Itoa(body.Depth["queued"]),
		"Placing|" + strconv.Itoa(body.Depth["placing"]),
		"Stalled|" + strconv.Itoa(body.Depth["stalled"]),
		"Constrained|" + strconv.Itoa(body.Depth["constrained"]),
	}))
	if len(body.Placing) > 0 {
		fmt.Fprintln(s.Stdout, "\nPlacing")
		fmt.Fprintln(s.Stdout, formatQueueEntries(body.Placing))
	}
	return 0
}

const queueJobsUsage = `
Usage: nomad queue jobs [options]

  List the jobs in the batch job queue: queued ones in release order with
  their position, then the released ones that are placing, stalled or
  constrained. The queue is one line across namespaces: without
  -namespace (or NOMAD_NAMESPACE) it lists every namespace the token may
  read, each entry with its place in the whole line; -namespace X lists
  X's entries only, and -namespace '*' all of them.
`

func runQueueJobs(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("queue jobs", s.Stderr, queueJobsUsage)
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
	entries, err := listQueue(client)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying the batch queue: %v\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, entries); done {
		return code
	}
	if len(entries) == 0 {
		fmt.Fprintln(s.Stdout, "No jobs in the batch queue")
		return 0
	}
	fmt.Fprintln(s.Stdout, formatQueueEntries(entries))
	return 0
}

func listQueue(client *api.Client) ([]queueEntry, error) {
	var entries []queueEntry
	_, err := client.Raw().Query("/v1/queue/jobs", &entries, nil)
	return entries, err
}

func formatQueueEntries(entries []queueEntry) string {
	rows := []string{"Position|Namespace|Job ID|Priority|Status|Enqueued|Released|Est. Start|Reason"}
	now := time.Now()
	for _, e := range entries {
		pos, released := "-", "-"
		if e.Position > 0 {
			pos = strconv.Itoa(e.Position)
		}
		if e.ReleaseTime > 0 {
			released = formatUnixNano(e.ReleaseTime)
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s|%s|%s|%s", pos, e.Namespace, e.JobID, e.Priority,
			e.Status, formatUnixNano(e.EnqueueTime), released, estimatedStart(e.EstimatedStart, now), orNone(e.reasonWords())))
	}
	return formatList(rows)
}

// estimatedStart shows an estimate relative to now: "-" when unknown,
// "now" when due, "in 4m0s" otherwise.
func estimatedStart(ns int64, now time.Time) string {
	if ns == 0 {
		return "-"
	}
	d := time.Unix(0, ns).Sub(now).Round(time.Second)
	if d <= 0 {
		return "now"
	}
	return "in " + d.String()
}
