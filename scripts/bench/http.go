package main

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

// mockBatchJob is a one-task mock_driver batch job of count allocs, each
// running for runFor.
func mockBatchJob(id string, count int, runFor string) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", count)
	task := api.NewTask("t", "mock_driver")
	task.Config = map[string]any{"run_for": runFor}
	task.Require(&api.Resources{CPU: new(10), MemoryMB: new(10)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// devAgent starts `nomad agent -dev` and waits for its node.
func (r *runner) devAgent(name string, extra ...string) (*agentProc, error) {
	a, err := r.startAgent(name, append([]string{"-dev"}, extra...)...)
	if err != nil {
		return nil, err
	}
	if _, err := a.waitLeader(time.Minute, nil); err != nil {
		a.stop()
		return nil, err
	}
	if err := a.waitNode(time.Minute); err != nil {
		a.stop()
		return nil, err
	}
	return a, nil
}

// registerAll registers jobs over HTTP with workers concurrent official
// api clients, and returns each registration's latency, the wall time of
// the whole, and when each job's registration returned.
func registerAll(c *api.Client, jobs []*api.Job, workers int) ([]time.Duration, time.Duration, []time.Time, error) {
	lat := make([]time.Duration, len(jobs))
	done := make([]time.Time, len(jobs))
	var (
		mu    sync.Mutex
		next  int
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= len(jobs) || stop {
					return
				}
				t0 := time.Now()
				_, _, err := c.Jobs().Register(jobs[i], nil)
				done[i] = time.Now()
				lat[i] = done[i].Sub(t0)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("register %s: %w", *jobs[i].ID, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), done, first
}

// httpSection measures job registrations over HTTP: 16 official api
// clients against a dev agent, a fresh agent per run.
func (r *runner) httpSection() section {
	n := 3000
	if r.quick {
		n = 500
	}
	sec := section{
		Title:   "HTTP job registration",
		Command: fmt.Sprintf("`bin/nomad agent -dev`; %s jobs registered by 16 goroutines with the official api client (`Jobs().Register`)", commas(int64(n))),
	}
	var rate, p50, p99 []float64
	for run := range r.runs {
		a, err := r.devAgent(fmt.Sprintf("http-%d", run))
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		jobs := make([]*api.Job, n)
		for i := range jobs {
			jobs[i] = mockBatchJob(fmt.Sprintf("reg-%d", i), 1, "1ms")
		}
		lat, wall, _, err := registerAll(a.client, jobs, 16)
		a.stop()
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		slices.Sort(lat)
		rate = append(rate, float64(n)/wall.Seconds())
		p50 = append(p50, ms(quantile(lat, 0.50)))
		p99 = append(p99, ms(quantile(lat, 0.99)))
		logf("   run %d: %.0f jobs/s p50 %.1f ms p99 %.1f ms", run, rate[run], p50[run], p99[run])
	}
	sec.Figures = []figure{
		{Name: "registrations, 16 clients", Runs: rate, Unit: "jobs/s", Target: atLeast(3000)},
		{Name: "latency p50", Runs: p50, Unit: "ms"},
		{Name: "latency p99", Runs: p99, Unit: "ms", Target: under(30)},
	}
	sec.Notes = append(sec.Notes, "Each job is a one-alloc mock_driver batch job (run_for 1ms); the agent places and runs them while the registrations go on, as a real cluster would.")
	return sec
}
