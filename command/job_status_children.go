package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// nextLaunchText is when a periodic job launches next, as "<RFC 3339>
// (<duration> from now)", or "" when it does not launch again.
func nextLaunchText(p *api.PeriodicConfig, now time.Time) (string, error) {
	loc, err := p.GetLocation()
	if err != nil {
		return "", err
	}
	next, err := p.Next(now.In(loc))
	if err != nil || next.IsZero() {
		return "", err
	}
	return fmt.Sprintf("%s (%s from now)", next.Format(time.RFC3339), next.Sub(now).Round(time.Second)), nil
}

// parentStatusRows are the job status rows of a periodic parent: its next
// launch, computed like the server does from the crons and time zone.
func parentStatusRows(job *api.Job, now time.Time) []string {
	p := job.Periodic
	if p == nil || job.ParentID != nil && *job.ParentID != "" {
		return nil
	}
	if p.Enabled != nil && !*p.Enabled || job.Stop != nil && *job.Stop {
		return []string{"Next Periodic Launch|none (disabled)"}
	}
	next, err := nextLaunchText(p, now)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("Next Periodic Launch|unknown (%v)", err)}
	case next == "":
		return []string{"Next Periodic Launch|none"}
	}
	return []string{"Next Periodic Launch|" + next}
}

// formatParentChildren appends to b what Nomad's job status shows for a
// periodic or parameterized parent instead of allocations: the
// parameterized block, the children summary and the children themselves.
func formatParentChildren(b *strings.Builder, c *api.Client, job *api.Job, q *api.QueryOptions) (string, error) {
	if pj := job.ParameterizedJob; pj != nil {
		b.WriteString("\n\nParameterized Job\n")
		b.WriteString(formatKV([]string{
			"Payload|" + pj.Payload,
			"Required Metadata|" + strings.Join(pj.MetaRequired, ", "),
			"Optional Metadata|" + strings.Join(pj.MetaOptional, ", "),
		}))
	}
	summary, _, err := c.Jobs().Summary(*job.ID, q)
	if err != nil {
		return "", fmt.Errorf("Error querying job summary: %s", err)
	}
	title, listTitle, infix := "Children Job Summary", "Previously Launched Jobs", "/periodic-"
	if job.ParameterizedJob != nil {
		title, listTitle, infix = "Parameterized Job Summary", "Dispatched Jobs", "/dispatch-"
	}
	ch := summary.Children
	if ch == nil {
		ch = &api.JobChildrenSummary{}
	}
	fmt.Fprintf(b, "\n\n%s\n", title)
	b.WriteString(formatList([]string{"Pending|Running|Dead", fmt.Sprintf("%d|%d|%d", ch.Pending, ch.Running, ch.Dead)}))

	opts := *q
	opts.Prefix = *job.ID + infix
	children, _, err := c.Jobs().List(&opts)
	if err != nil {
		return "", fmt.Errorf("Error querying child jobs: %s", err)
	}
	fmt.Fprintf(b, "\n\n%s\n", listTitle)
	var rows []string
	sort.Slice(children, func(i, j int) bool { return children[i].SubmitTime > children[j].SubmitTime })
	for _, child := range children {
		if child.ParentID != *job.ID {
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%s", child.ID, jobStatusString(child.Status, child.Stop)))
	}
	if len(rows) == 0 {
		b.WriteString("No instances of " + map[bool]string{true: "parameterized", false: "periodic"}[job.ParameterizedJob != nil] + " job found")
		return b.String(), nil
	}
	b.WriteString(formatList(append([]string{"ID|Status"}, rows...)))
	return b.String(), nil
}
