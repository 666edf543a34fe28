package command

import (
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/nomad/api"
)

const evalStatusUsage = `
Usage: nomad eval status [options] <evaluation>

  Display information about evaluations.
`

func runEvalStatus(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
		asJSON  bool
		tmpl    string
		mon     bool
	)
	fs := newFlagSet("eval status", s.Stderr, evalStatusUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.BoolVar(&asJSON, "json", false, "Output the evaluation in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display evaluation using a Go template")
	fs.BoolVar(&mon, "monitor", false, "Monitor an outstanding evaluation")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <evaluation>")
		return 1
	}
	prefix := fs.Arg(0)
	if len(prefix) == 1 {
		fmt.Fprintln(s.Stderr, "Identifier must contain at least two characters.")
		return 1
	}
	evals, _, err := client.Evaluations().PrefixList(sanitizeUUIDPrefix(prefix))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying evaluation: %v\n", err)
		return 1
	}
	if len(evals) == 0 {
		fmt.Fprintf(s.Stderr, "No evaluation(s) with prefix or id %q found\n", prefix)
		return 1
	}
	if len(evals) > 1 {
		fmt.Fprintf(s.Stdout, "Prefix matched multiple evaluations\n\n%s\n", formatEvalList(evals, verbose))
		return 0
	}
	if mon {
		return newMonitor(client, s.Stdout, verbose).monitor(evals[0].ID)
	}
	eval, _, err := client.Evaluations().Info(evals[0].ID, &api.QueryOptions{Params: map[string]string{"related": "true"}})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying evaluation: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, eval); done {
		return code
	}
	failures := len(eval.FailedTGAllocs) > 0
	rows := []string{
		"ID|" + shortID(eval.ID, verbose),
		"Create Time|" + prettyTimeDiff(time.Unix(0, eval.CreateTime), time.Now()),
		"Modify Time|" + prettyTimeDiff(time.Unix(0, eval.ModifyTime), time.Now()),
		"Status|" + eval.Status,
		"Status Description|" + orNone(eval.StatusDescription),
		"Type|" + eval.Type,
		"TriggeredBy|" + eval.TriggeredBy,
		"Job ID|" + eval.JobID,
		"Namespace|" + eval.Namespace,
		fmt.Sprintf("Priority|%d", eval.Priority),
		fmt.Sprintf("Placement Failures|%v", failures),
	}
	if eval.NodeID != "" {
		rows = append(rows, "Node ID|"+shortID(eval.NodeID, verbose))
	}
	if verbose {
		rows = append(rows, "Previous Eval|"+orNone(eval.PreviousEval), "Next Eval|"+orNone(eval.NextEval), "Blocked Eval|"+orNone(eval.BlockedEval))
	}
	fmt.Fprintln(s.Stdout, formatKV(rows))
	if len(eval.RelatedEvals) > 0 {
		rel := []string{"ID|Priority|Triggered By|Node ID|Status|Description"}
		for _, r := range eval.RelatedEvals {
			rel = append(rel, fmt.Sprintf("%s|%d|%s|%s|%s|%s", shortID(r.ID, verbose), r.Priority, r.TriggeredBy, shortID(r.NodeID, verbose), r.Status, r.StatusDescription))
		}
		fmt.Fprintf(s.Stdout, "\nRelated Evaluations\n%s\n", formatList(rel))
	}
	allocs, _, err := client.Evaluations().Allocations(eval.ID, nil)
	if err == nil && len(allocs) > 0 {
		fmt.Fprintf(s.Stdout, "\nPlaced Allocations\n%s\n", formatAllocListStubs(allocs, verbose))
	}
	if failures {
		fmt.Fprintln(s.Stdout, "\nFailed Placements")
		for _, tg := range sortedKeys(eval.FailedTGAllocs) {
			m := eval.FailedTGAllocs[tg]
			noun := "allocation"
			if m.CoalescedFailures > 0 {
				noun += "s"
			}
			fmt.Fprintf(s.Stdout, "Task Group %q (failed to place %d %s):\n%s", tg, m.CoalescedFailures+1, noun, formatAllocMetrics(m, verbose, "  "))
		}
		if eval.BlockedEval != "" {
			fmt.Fprintf(s.Stdout, "\nEvaluation %q waiting for additional capacity to place remainder\n", shortID(eval.BlockedEval, verbose))
		}
	}
	return 0
}

func formatEvalList(evals []*api.Evaluation, verbose bool) string {
	sort.SliceStable(evals, func(i, j int) bool { return evals[i].CreateIndex > evals[j].CreateIndex })
	rows := []string{"ID|Priority|Triggered By|Job ID|Namespace|Node ID|Status|Placement Failures"}
	for _, e := range evals {
		node := e.NodeID
		if node == "" {
			node = "<none>"
		} else {
			node = shortID(node, verbose)
		}
		rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%v", shortID(e.ID, verbose), e.Priority, e.TriggeredBy, e.JobID, e.Namespace, node, e.Status, len(e.FailedTGAllocs) > 0))
	}
	return formatList(rows)
}

const evalListUsage = `
Usage: nomad eval list [options]

  List is used to list the set of evaluations processed by Nomad.
`

func runEvalList(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
		asJSON  bool
		tmpl    string
		job     string
		status  string
		perPage int
		token   string
		filter  string
	)
	fs := newFlagSet("eval list", s.Stderr, evalListUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Show full information")
	fs.BoolVar(&asJSON, "json", false, "Output the evaluations in their JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display evaluations using a Go template")
	fs.StringVar(&job, "job", "", "Only show evaluations for this job ID")
	fs.StringVar(&status, "status", "", "Only show evaluations with this status")
	fs.IntVar(&perPage, "per-page", 0, "How many results to show per page")
	fs.StringVar(&token, "page-token", "", "Where to start pagination")
	fs.StringVar(&filter, "filter", "", "Filter expression (go-bexpr, as on Nomad)")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	// -job and -status go to the server with the filter, as Nomad's CLI
	// sends them, so they apply before paging and together with -filter.
	q := &api.QueryOptions{PerPage: int32(perPage), NextToken: token, Filter: filter, Params: map[string]string{}}
	if job != "" {
		q.Params["job"] = job
	}
	if status != "" {
		q.Params["status"] = status
	}
	evals, qm, err := client.Evaluations().List(q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying evaluations: %v\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, evals); done {
		return code
	}
	if len(evals) == 0 {
		fmt.Fprintln(s.Stdout, "No evals found")
		return 0
	}
	fmt.Fprintln(s.Stdout, formatEvalList(evals, verbose))
	if qm != nil && qm.NextToken != "" {
		fmt.Fprintf(s.Stdout, "\nResults have been paginated. To get the next page run:\n\nnomad eval list -page-token %s\n", qm.NextToken)
	}
	return 0
}
