package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/nomad/api"
)

// latenessSection measures max_run_duration: one batch job of count 100
// with a 3 s limit on mock_driver tasks that would run an hour, so all
// 100 deadlines fall on the same instant. The lateness of an alloc is
// when the server saw it complete (its ModifyTime from the client's
// update) minus its deadline (CreateTime + limit).
func (r *runner) latenessSection() section {
	const count, limit = 100, 3 * time.Second
	sec := section{
		Title:   "max_run_duration lateness",
		Command: "`bin/nomad agent -dev`; one mock_driver batch job, count 100, max_run_duration 3s, run_for 1h",
	}
	var p50, p99, worst, earliest []float64
	for run := range r.runs {
		a, err := r.devAgent(fmt.Sprintf("lateness-%d", run))
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		late, err := lateness(a.client, fmt.Sprintf("lateness-%d", run), count, limit)
		a.stop()
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		p50 = append(p50, ms(quantile(late, 0.50)))
		p99 = append(p99, ms(quantile(late, 0.99)))
		worst = append(worst, ms(late[len(late)-1]))
		earliest = append(earliest, ms(late[0]))
		logf("   run %d: p50 %.1f ms p99 %.1f ms max %.1f ms min %.1f ms", run, p50[run], p99[run], worst[run], earliest[run])
	}
	sec.Figures = []figure{
		{Name: "lateness p50", Runs: p50, Unit: "ms"},
		{Name: "lateness p99", Runs: p99, Unit: "ms", Target: under(50)},
		{Name: "lateness max", Runs: worst, Unit: "ms"},
		{Name: "earliest (negative would be early)", Runs: earliest, Unit: "ms", Target: &target{Text: "≥ 0 (never early)", Check: func(x float64) bool { return x >= 0 }}},
	}
	return sec
}

func lateness(c *api.Client, id string, count int, limit time.Duration) ([]time.Duration, error) {
	job := mockBatchJob(id, count, "1h")
	job.TaskGroups[0].MaxRunDuration = new(limit)
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		allocs, _, err := c.Jobs().Allocations(id, true, nil)
		if err != nil {
			return nil, err
		}
		var late []time.Duration
		for _, al := range allocs {
			if al.ClientStatus == "complete" {
				dl := time.Unix(0, al.CreateTime).Add(limit)
				late = append(late, time.Unix(0, al.ModifyTime).Sub(dl))
			}
		}
		if len(late) == count {
			slices.Sort(late)
			return late, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d allocs complete after 2m", len(late), count)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
