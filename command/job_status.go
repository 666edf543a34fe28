package command

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

const jobStatusUsage = `
Usage: nomad job status [options] <job>

  Display status information about a job. If no job ID is given, a list of
  all known jobs is displayed.
`

// errAmbiguous carries the table of matches of an ambiguous prefix.
type errAmbiguous struct{ msg string }

func (e *errAmbiguous) Error() string { return e.msg }

// resolveJob finds the one job an ID prefix names, as Nomad's CLI does:
// an exact match wins, several matches are an error listing them.
func resolveJob(c *api.Client, prefix string) (*api.JobListStub, error) {
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: prefix, PerPage: 20})
	if err != nil {
		return nil, fmt.Errorf("Error querying job prefix: %w", err)
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].ID < jobs[j].ID })
	if len(jobs) == 0 {
		return nil, fmt.Errorf("No job(s) with prefix or ID %q found", prefix)
	}
	if len(jobs) > 1 && jobs[0].ID != prefix {
		rows := []string{"ID|Type|Priority|Status|Submit Date"}
		for _, j := range jobs {
			rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", j.ID, j.Type, j.Priority, jobStatusString(j.Status, j.Stop), formatUnixNano(j.SubmitTime)))
		}
		return nil, &errAmbiguous{msg: fmt.Sprintf("Prefix matched multiple jobs\n\n%s", formatList(rows))}
	}
	return jobs[0], nil
}

func jobStatusString(status string, stop bool) string {
	if stop {
		return status + " (stopped)"
	}
	return status
}

func runJobStatus(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
		asJSON  bool
		tmpl    string
		all     bool
	)
	fs := newFlagSet("job status", s.Stderr, jobStatusUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	fs.BoolVar(&asJSON, "json", false, "Output the job in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the job using a Go template")
	fs.BoolVar(&all, "all-allocs", false, "Display all allocations matching the job ID, even those from an older instance of the job")
	fs.Bool("short", false, "Display short output")
	fs.Bool("evals", false, "Display the evaluations associated with the job")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes either no arguments or one: <job>")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if fs.NArg() == 0 {
		jobs, _, err := client.Jobs().List(nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying jobs: %s\n", err)
			return 1
		}
		if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, jobs); done {
			return code
		}
		if len(jobs) == 0 {
			fmt.Fprintln(s.Stdout, "No running jobs")
			return 0
		}
		fmt.Fprintln(s.Stdout, formatJobList(jobs))
		return 0
	}
	stub, err := resolveJob(client, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	q := &api.QueryOptions{Namespace: stub.JobSummary.Namespace}
	job, _, err := client.Jobs().Info(stub.ID, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying job: %s\n", err)
		return 1
	}
	if asJSON || tmpl != "" {
		_, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, job)
		return code
	}
	out, err := formatJobStatus(client, job, q, verbose, all)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	fmt.Fprintln(s.Stdout, out)
	return 0
}

func formatJobList(jobs []*api.JobListStub) string {
	rows := []string{"ID|Type|Priority|Status|Submit Date"}
	for _, j := range jobs {
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", j.ID, j.Type, j.Priority, jobStatusString(j.Status, j.Stop), formatUnixNano(j.SubmitTime)))
	}
	return formatList(rows)
}

func formatJobStatus(c *api.Client, job *api.Job, q *api.QueryOptions, verbose, all bool) (string, error) {
	var b strings.Builder
	periodic := job.Periodic != nil
	parameterized := job.ParameterizedJob != nil
	nodePool := ""
	if job.NodePool != nil {
		nodePool = *job.NodePool
	}
	rows := []string{
		"ID|" + *job.ID,
		"Name|" + *job.Name,
		"Submit Date|" + formatUnixNano(*job.SubmitTime),
		"Type|" + *job.Type,
		fmt.Sprintf("Priority|%d", *job.Priority),
		"Datacenters|" + strings.Join(job.Datacenters, ","),
		"Namespace|" + *job.Namespace,
		"Node Pool|" + nodePool,
		"Status|" + jobStatusString(*job.Status, job.Stop != nil && *job.Stop),
		fmt.Sprintf("Periodic|%v", periodic),
		fmt.Sprintf("Parameterized|%v", parameterized),
	}
	rows = append(rows, parentStatusRows(job, time.Now())...)
	if *job.Type == "batch" {
		// Every state the queue knows shows, with its reason in words:
		// a job released from the queue is still in it until placed.
		if e := queueEntryOf(c, *job.Namespace, *job.ID); e != nil {
			rows = append(rows, "Batch Queue|"+queueStateText(e, time.Now(), ""))
			if e.Factors != nil {
				rows = append(rows, "Effective Priority|"+num(e.EffectivePriority))
			}
		}
	}
	b.WriteString(formatKV(rows))
	if (periodic || parameterized) && (job.ParentID == nil || *job.ParentID == "") {
		return formatParentChildren(&b, c, job, q)
	}

	// The summary is read raw: the official client's type has no
	// TimedOut count.
	var summary jobSummaryBody
	if _, err := c.Raw().Query("/v1/job/"+url.PathEscape(*job.ID)+"/summary", &summary, q); err != nil {
		return "", fmt.Errorf("Error querying job summary: %s", err)
	}
	b.WriteString("\n\nSummary\n")
	b.WriteString(formatJobSummary(job, summary))

	evals, _, err := c.Jobs().Evaluations(*job.ID, q)
	if err != nil {
		return "", fmt.Errorf("Error querying job evaluations: %s", err)
	}
	var blocked []string
	for _, e := range evals {
		if e.Status == "blocked" {
			for tg := range e.FailedTGAllocs {
				blocked = append(blocked, tg)
			}
		}
	}
	if len(blocked) > 0 {
		sort.Strings(blocked)
		b.WriteString("\n\nPlacement Failure\n")
		for _, e := range evals {
			if e.Status != "blocked" {
				continue
			}
			for _, tg := range sortedKeys(e.FailedTGAllocs) {
				fmt.Fprintf(&b, "Task Group %q:\n%s", tg, formatAllocMetrics(e.FailedTGAllocs[tg], false, "  "))
			}
		}
		b.WriteString(strings.TrimRight("", "\n"))
	}

	allocs, _, err := c.Jobs().Allocations(*job.ID, all, q)
	if err != nil {
		return "", fmt.Errorf("Error querying job allocations: %s", err)
	}
	b.WriteString("\n\nAllocations\n")
	if len(allocs) == 0 {
		b.WriteString("No allocations placed")
		return b.String(), nil
	}
	b.WriteString(withJobAllocDeadlines(formatAllocListStubs(allocs, verbose), job, allocs, verbose))
	return b.String(), nil
}

// jobSummaryBody is GET /v1/job/:id/summary as nomadq answers it.
type jobSummaryBody struct {
	Summary map[string]struct {
		Queued, Starting, Running, Failed, Complete, Lost, Unknown int
		// TimedOut is how many of Complete ended by max_run_duration.
		TimedOut int
	}
}

// formatJobSummary is job status's Summary table. A job that uses
// max_run_duration (or has allocs that ended by it) gets a Timed Out
// column: how many of the complete allocs reached their deadline.
func formatJobSummary(job *api.Job, summary jobSummaryBody) string {
	timeouts := false
	for _, tg := range job.TaskGroups {
		timeouts = timeouts || (tg.MaxRunDuration != nil && *tg.MaxRunDuration > 0)
	}
	for _, t := range summary.Summary {
		timeouts = timeouts || t.TimedOut > 0
	}
	header := "Task Group|Queued|Starting|Running|Failed|Complete|Lost|Unknown"
	if timeouts {
		header += "|Timed Out"
	}
	rows := []string{header}
	for _, tg := range sortedKeys(summary.Summary) {
		t := summary.Summary[tg]
		row := fmt.Sprintf("%s|%d|%d|%d|%d|%d|%d|%d", tg, t.Queued, t.Starting, t.Running, t.Failed, t.Complete, t.Lost, t.Unknown)
		if timeouts {
			row += fmt.Sprintf("|%d", t.TimedOut)
		}
		rows = append(rows, row)
	}
	return formatList(rows)
}

// formatAllocListStubs is the Allocations table of job status.
func formatAllocListStubs(allocs []*api.AllocationListStub, verbose bool) string {
	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].CreateIndex != allocs[j].CreateIndex {
			return allocs[i].CreateIndex > allocs[j].CreateIndex
		}
		return allocs[i].ID < allocs[j].ID
	})
	now := time.Now()
	rows := []string{"ID|Node ID|Task Group|Version|Desired|Status|Created|Modified"}
	for _, a := range allocs {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s|%s|%s", shortID(a.ID, verbose), shortID(a.NodeID, verbose), a.TaskGroup,
			a.JobVersion, a.DesiredStatus, a.ClientStatus, prettyTimeDiff(time.Unix(0, a.CreateTime), now), prettyTimeDiff(time.Unix(0, a.ModifyTime), now)))
	}
	return formatList(rows)
}

var errAborted = errors.New("Cancelling job stop")
