package command

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/nomad/api"
)

// maxRunDeadline is when an alloc of group in job hits its
// max_run_duration: CreateTime + the group's limit, for batch and
// sysbatch jobs only, as the client enforces it.
func maxRunDeadline(job *api.Job, group string, createTime int64) (time.Time, bool) {
	if job == nil || createTime == 0 || job.Type == nil || (*job.Type != "batch" && *job.Type != "sysbatch") {
		return time.Time{}, false
	}
	tg := job.LookupTaskGroup(group)
	if tg == nil || tg.MaxRunDuration == nil || *tg.MaxRunDuration <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, createTime).Add(*tg.MaxRunDuration), true
}

// formatDeadline renders a deadline relative to now ("in 2m5s",
// "3s ago"), or as RFC 3339 when verbose.
func formatDeadline(t, now time.Time, verbose bool) string {
	if verbose {
		return formatTime(t)
	}
	if t.After(now) {
		d := t.Sub(now).Round(time.Second)
		return "in " + d.String()
	}
	return prettyTimeDiff(t, now)
}

// allocDeadlineCells is the Max Run Deadline cell of each alloc, in
// order, and whether any alloc has one.
func allocDeadlineCells(n int, deadline func(i int) (time.Time, bool), verbose bool) ([]string, bool) {
	now := time.Now()
	cells := make([]string, n)
	found := false
	for i := range cells {
		cells[i] = "<none>"
		if t, ok := deadline(i); ok {
			cells[i] = formatDeadline(t, now, verbose)
			found = true
		}
	}
	return cells, found
}

// appendColumn adds a last column to a table formatList produced (a
// header line, then one line per row), aligned as formatList would.
func appendColumn(table, header string, cells []string) string {
	lines := strings.Split(table, "\n")
	if len(lines) != len(cells)+1 {
		return table
	}
	width := 0
	for _, l := range lines {
		width = max(width, utf8.RuneCountInString(l))
	}
	for i, l := range lines {
		cell := header
		if i > 0 {
			cell = cells[i-1]
		}
		lines[i] = l + strings.Repeat(" ", width-utf8.RuneCountInString(l)) + "  " + cell
	}
	return strings.Join(lines, "\n")
}

// withJobAllocDeadlines adds the Max Run Deadline column to job
// status's Allocations table (allocs in table order) when any alloc has
// a deadline. Like Nomad, it uses the job's current group settings.
func withJobAllocDeadlines(table string, job *api.Job, allocs []*api.AllocationListStub, verbose bool) string {
	cells, found := allocDeadlineCells(len(allocs), func(i int) (time.Time, bool) {
		return maxRunDeadline(job, allocs[i].TaskGroup, allocs[i].CreateTime)
	}, verbose)
	if !found {
		return table
	}
	return appendColumn(table, "Max Run Deadline", cells)
}

// withNodeAllocDeadlines adds the Max Run Deadline column to node
// status's Allocations table, from each alloc's own job.
func withNodeAllocDeadlines(table string, allocs []*api.Allocation, verbose bool) string {
	cells, found := allocDeadlineCells(len(allocs), func(i int) (time.Time, bool) {
		return maxRunDeadline(allocs[i].Job, allocs[i].TaskGroup, allocs[i].CreateTime)
	}, verbose)
	if !found {
		return table
	}
	return appendColumn(table, "Max Run Deadline", cells)
}

// allocDeadlineRow is alloc status's Max Run Deadline row, or nothing.
func allocDeadlineRow(a *api.Allocation, verbose bool) []string {
	t, ok := maxRunDeadline(a.Job, a.TaskGroup, a.CreateTime)
	if !ok {
		return nil
	}
	return []string{fmt.Sprintf("Max Run Deadline|%s", formatDeadline(t, time.Now(), verbose))}
}
