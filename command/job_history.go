package command

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

const jobHistoryUsage = `
Usage: nomad job history [options] <job>

  History displays the known versions of a job. With -p it shows what
  changed in each version compared with the version before it, which helps
  to choose a version to revert to.
`

// clientForJob builds the API client and resolves a job ID prefix to one
// job; it prints the error and reports false when either fails.
func clientForJob(af *apiFlags, prefix string, s Streams) (*api.Client, *api.JobListStub, bool) {
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return nil, nil, false
	}
	stub, err := resolveJob(client, strings.TrimSpace(prefix))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return nil, nil, false
	}
	return client, stub, true
}

// parseJobVersion reads a job version argument or flag value.
func parseJobVersion(s string) (uint64, error) {
	return strconv.ParseUint(s, 10, 64)
}

func runJobHistory(args []string, s Streams) int {
	var (
		af         apiFlags
		diff, full bool
		asJSON     bool
		tmpl       string
		versionStr string
	)
	fs := newFlagSet("job history", s.Stderr, jobHistoryUsage)
	af.register(fs)
	fs.BoolVar(&diff, "p", false, "Display the difference between each version of the job and the version before it")
	fs.BoolVar(&full, "full", false, "Display the full job definition for each version")
	fs.StringVar(&versionStr, "version", "", "Display only the history for the given job version")
	fs.BoolVar(&asJSON, "json", false, "Output the job versions in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the job versions using a Go template")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <job>")
		return 1
	}
	if (asJSON || tmpl != "") && (diff || full) {
		fmt.Fprintln(s.Stderr, "-json and -t are exclusive with -p and -full")
		return 1
	}
	var version uint64
	if versionStr != "" {
		v, err := parseJobVersion(versionStr)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error parsing version value %q: %v\n", versionStr, err)
			return 1
		}
		version = v
	}
	client, stub, ok := clientForJob(&af, fs.Arg(0), s)
	if !ok {
		return 1
	}
	q := &api.QueryOptions{Namespace: stub.Namespace}
	versions, diffs, _, err := client.Jobs().Versions(stub.ID, diff, q)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving job versions: %s\n", err)
		return 1
	}
	// diffs[i] is what versions[i] changed from versions[i+1], the one
	// before it; the oldest version has none.
	diffOf := func(i int) *api.JobDiff {
		if i < len(diffs) {
			return diffs[i]
		}
		return nil
	}
	if versionStr != "" {
		for i, v := range versions {
			if v.Version == nil || *v.Version != version {
				continue
			}
			if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, v); done {
				return code
			}
			out, err := formatJobVersion(v, diffOf(i), full)
			if err != nil {
				fmt.Fprintln(s.Stderr, err)
				return 1
			}
			fmt.Fprintln(s.Stdout, out)
			return 0
		}
		fmt.Fprintf(s.Stderr, "Error printing job history: job %q has no version %d\n", stub.ID, version)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, versions); done {
		return code
	}
	parts := make([]string, 0, len(versions))
	for i, v := range versions {
		out, err := formatJobVersion(v, diffOf(i), full)
		if err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		parts = append(parts, out)
	}
	fmt.Fprintln(s.Stdout, strings.Join(parts, "\n\n"))
	return 0
}

// formatJobVersion is one version's block of job history: version,
// stability and submit date, then the diff and the full job when asked.
func formatJobVersion(job *api.Job, diff *api.JobDiff, full bool) (string, error) {
	rows := []string{
		fmt.Sprintf("Version|%d", *job.Version),
		fmt.Sprintf("Stable|%v", job.Stable != nil && *job.Stable),
		"Submit Date|" + formatUnixNano(*job.SubmitTime),
	}
	var extra []string
	if diff != nil && diff.Type != "None" {
		rows = append(rows, "Diff|")
		extra = append(extra, strings.TrimSpace(formatJobDiff(diff, false)))
	}
	if full {
		buf, err := json.MarshalIndent(job, "", "    ")
		if err != nil {
			return "", fmt.Errorf("Error formatting the data: %s", err)
		}
		rows = append(rows, "Full|JSON Job:")
		extra = append(extra, string(buf))
	}
	table := formatKV(rows)
	if len(extra) == 0 {
		return table, nil
	}
	// The multi-line values follow their key, as Nomad prints them: the
	// diff under "Diff =", the job under "Full = JSON Job:".
	lines := strings.Split(table, "\n")
	head := lines[:len(lines)-len(extra)]
	var b strings.Builder
	b.WriteString(strings.Join(head, "\n"))
	for i, key := range lines[len(head):] {
		fmt.Fprintf(&b, "\n%s\n%s", key, extra[i])
	}
	return b.String(), nil
}

const jobRevertUsage = `
Usage: nomad job revert [options] <job> <version>

  Revert registers a prior version of a job again, as a new version. The
  versions to revert to are listed by "nomad job history". The evaluation
  the revert creates is monitored unless -detach is given.
`

func runJobRevert(args []string, s Streams) int {
	var (
		af              apiFlags
		detach, verbose bool
	)
	fs := newFlagSet("job revert", s.Stderr, jobRevertUsage)
	af.register(fs)
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the evaluation")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(s.Stderr, "This command takes two arguments: <job> <version>")
		return 1
	}
	// nomadq has no version tags, so the version must be a number.
	version, err := parseJobVersion(fs.Arg(1))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error parsing version %q: it must be a job version number (version tags are not supported by nomadq)\n", fs.Arg(1))
		return 1
	}
	client, stub, ok := clientForJob(&af, fs.Arg(0), s)
	if !ok {
		return 1
	}
	w := &api.WriteOptions{Namespace: stub.Namespace}
	resp, _, err := client.Jobs().Revert(stub.ID, version, nil, w, "", "")
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving job versions: %s\n", err)
		return 1
	}
	if resp.EvalID == "" {
		return 0
	}
	if detach {
		fmt.Fprintln(s.Stdout, "Evaluation ID: "+resp.EvalID)
		return 0
	}
	return newMonitor(client, s.Stdout, verbose).monitor(resp.EvalID)
}
