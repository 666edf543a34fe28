package command

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestMaxRunDeadline(t *testing.T) {
	created := time.Unix(1_700_000_000, 0)
	job := func(typ string, d *time.Duration) *api.Job {
		tg := api.NewTaskGroup("g", 1)
		tg.MaxRunDuration = d
		j := &api.Job{Type: new(typ)}
		j.AddTaskGroup(tg)
		return j
	}
	got, ok := maxRunDeadline(job("batch", new(time.Minute)), "g", created.UnixNano())
	must.True(t, ok)
	must.Eq(t, created.Add(time.Minute), got)
	_, ok = maxRunDeadline(job("sysbatch", new(time.Minute)), "g", created.UnixNano())
	must.True(t, ok)
	for name, c := range map[string]struct {
		job     *api.Job
		group   string
		created int64
	}{
		"service":      {job("service", new(time.Minute)), "g", created.UnixNano()},
		"unset":        {job("batch", nil), "g", created.UnixNano()},
		"other group":  {job("batch", new(time.Minute)), "x", created.UnixNano()},
		"no create ts": {job("batch", new(time.Minute)), "g", 0},
		"no job":       {nil, "g", created.UnixNano()},
	} {
		_, ok := maxRunDeadline(c.job, c.group, c.created)
		must.False(t, ok, must.Sprint(name))
	}
}

func TestFormatDeadline(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	must.Eq(t, "in 2m5s", formatDeadline(now.Add(125*time.Second), now, false))
	must.Eq(t, "3s ago", formatDeadline(now.Add(-3*time.Second), now, false))
	must.Eq(t, formatTime(now.Add(time.Minute)), formatDeadline(now.Add(time.Minute), now, true))
}

func TestAppendColumn(t *testing.T) {
	table := formatList([]string{"ID|Status", "a|running", "bbbb|complete"})
	got := appendColumn(table, "Max Run Deadline", []string{"in 5s", "<none>"})
	want := formatList([]string{"ID|Status|Max Run Deadline", "a|running|in 5s", "bbbb|complete|<none>"})
	must.Eq(t, want, got)
}

// A finished alloc's deadline is not shown as lying ahead: the row and
// the column say whether it was reached and when the alloc ended.
func TestAllocDeadline_FinishedAllocs(t *testing.T) {
	created := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tg := api.NewTaskGroup("g", 1)
	tg.MaxRunDuration = new(10 * time.Minute)
	job := &api.Job{Type: new("batch")}
	job.AddTaskGroup(tg)
	alloc := func(status, desc string, finished time.Time) *api.Allocation {
		return &api.Allocation{Job: job, TaskGroup: "g", CreateTime: created.UnixNano(), ClientStatus: status,
			ClientDescription: desc, TaskStates: map[string]*api.TaskState{"t": {FinishedAt: finished}}}
	}
	deadline := formatTime(created.Add(10 * time.Minute))
	cases := []struct {
		name  string
		alloc *api.Allocation
		row   string
		cell  string
	}{
		{"timed out", alloc("complete", "allocation exceeded max_run_duration", created.Add(10*time.Minute+time.Second)),
			"Max Run Deadline|reached " + deadline + ": ended by max_run_duration at " + formatTime(created.Add(10*time.Minute+time.Second)),
			"reached (timed out)"},
		{"finished before", alloc("complete", "All tasks have completed", created.Add(3*time.Minute)),
			"Max Run Deadline|not reached: the allocation ended at " + formatTime(created.Add(3*time.Minute)) + ", before its deadline " + deadline,
			"not reached"},
		{"failed before", alloc("failed", "Failed tasks", created.Add(time.Minute)),
			"Max Run Deadline|not reached: the allocation ended at " + formatTime(created.Add(time.Minute)) + ", before its deadline " + deadline,
			"not reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, []string{tc.row}, allocDeadlineRow(tc.alloc, false))
			cells, found := allocDeadlineCells(1, func(int) (time.Time, bool) { return created.Add(10 * time.Minute), true },
				func(int) allocEnd { return allocEndOf(tc.alloc.ClientStatus, tc.alloc.ClientDescription) }, false)
			must.True(t, found)
			must.Eq(t, []string{tc.cell}, cells)
		})
	}
}
