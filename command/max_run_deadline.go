package command

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
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

// allocEnd is how an alloc stands against its deadline: still running
// (the deadline is ahead or due), or ended, by max_run_duration or not.
type allocEnd struct {
	ended    bool
	timedOut bool
}

// allocEndOf reads an alloc's client status and description: the client
// ends a timed-out alloc complete, with a description that says so.
func allocEndOf(clientStatus, description string) allocEnd {
	switch clientStatus {
	case "complete", "failed", "lost":
		return allocEnd{ended: true, timedOut: clientStatus == "complete" && description == structs.AllocTimeoutReasonMaxRunDuration}
	}
	return allocEnd{}
}

// allocDeadlineCells is the Max Run Deadline cell of each alloc, in
// order, and whether any alloc has one. An ended alloc's deadline is no
// longer ahead: its cell says whether it was reached.
func allocDeadlineCells(n int, deadline func(i int) (time.Time, bool), end func(i int) allocEnd, verbose bool) ([]string, bool) {
	now := time.Now()
	cells := make([]string, n)
	found := false
	for i := range cells {
		cells[i] = "<none>"
		t, ok := deadline(i)
		if !ok {
			continue
		}
		found = true
		switch e := end(i); {
		case e.timedOut:
			cells[i] = "reached (timed out)"
		case e.ended:
			cells[i] = "not reached"
		default:
			cells[i] = formatDeadline(t, now, verbose)
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
	}, func(i int) allocEnd {
		return allocEndOf(allocs[i].ClientStatus, allocs[i].ClientDescription)
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
	}, func(i int) allocEnd {
		return allocEndOf(allocs[i].ClientStatus, allocs[i].ClientDescription)
	}, verbose)
	if !found {
		return table
	}
	return appendColumn(table, "Max Run Deadline", cells)
}

// allocDeadlineRow is alloc status's Max Run Deadline row, or nothing.
// A finished alloc's row says whether the deadline was reached and when
// the alloc ended, not a deadline that would lie ahead.
func allocDeadlineRow(a *api.Allocation, verbose bool) []string {
	t, ok := maxRunDeadline(a.Job, a.TaskGroup, a.CreateTime)
	if !ok {
		return nil
	}
	switch e := allocEndOf(a.ClientStatus, a.ClientDescription); {
	case e.timedOut:
		return []string{fmt.Sprintf("Max Run Deadline|reached %s: ended by max_run_duration at %s", formatTime(t), formatTime(allocEndTime(a)))}
	case e.ended:
		return []string{fmt.Sprintf("Max Run Deadline|not reached: the allocation ended at %s, before its deadline %s", formatTime(allocEndTime(a)), formatTime(t))}
	}
	return []string{fmt.Sprintf("Max Run Deadline|%s", formatDeadline(t, time.Now(), verbose))}
}

// allocEndTime is when a finished alloc's last task finished, or its
// last modification when no task reports it.
func allocEndTime(a *api.Allocation) time.Time {
	var end time.Time
	for _, st := range a.TaskStates {
		if st != nil && st.FinishedAt.After(end) {
			end = st.FinishedAt
		}
	}
	if end.IsZero() {
		end = time.Unix(0, a.ModifyTime)
	}
	return end
}
