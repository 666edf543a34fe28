package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	// measure registers n jobs on a fresh agent and returns the rate and
	// the p50 and p99 latency; with account set, it also takes a CPU
	// account over the registrations.
	measure := func(name string, start func(string) (*agentProc, error), account bool) (float64, float64, float64, *cpuAccount, error) {
		a, err := start(name)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		defer a.stop()
		jobs := make([]*api.Job, n)
		for i := range jobs {
			jobs[i] = mockBatchJob(fmt.Sprintf("reg-%d", i), 1, "1ms")
		}
		var pr *profiling
		if account {
			pr = startAccount(a, 2)
		}
		lat, wall, _, err := registerAll(a.client, jobs, 16)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		var acc *cpuAccount
		if pr != nil {
			c := pr.finish(n)
			acc = &c
		}
		slices.Sort(lat)
		return float64(n) / wall.Seconds(), ms(quantile(lat, 0.50)), ms(quantile(lat, 0.99)), acc, nil
	}
	serverOnly := func(name string) (*agentProc, error) {
		a, err := r.startAgent(name, "-server", "-bootstrap-expect", "1", "-data-dir", filepath.Join(r.workDir, name))
		if err != nil {
			return nil, err
		}
		if _, err := a.waitLeader(time.Minute, nil); err != nil {
			a.stop()
			return nil, err
		}
		return a, nil
	}
	var rate, p50, p99, srvRate, srvP99 []float64
	for run := range r.runs {
		rt, l50, l99, _, err := measure(fmt.Sprintf("http-%d", run), func(name string) (*agentProc, error) { return r.devAgent(name) }, false)
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		rate, p50, p99 = append(rate, rt), append(p50, l50), append(p99, l99)
		logf("   run %d: %.0f jobs/s p50 %.1f ms p99 %.1f ms", run, rt, l50, l99)
		rt, _, l99, _, err = measure(fmt.Sprintf("http-server-%d", run), serverOnly, false)
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		srvRate, srvP99 = append(srvRate, rt), append(srvP99, l99)
		logf("   run %d, server alone: %.0f jobs/s p99 %.1f ms", run, rt, l99)
	}
	sec.Figures = []figure{
		{Name: "registrations, 16 clients", Runs: rate, Unit: "jobs/s", Target: atLeast(3000).because(whyNotHTTP)},
		{Name: "latency p50", Runs: p50, Unit: "ms"},
		{Name: "latency p99", Runs: p99, Unit: "ms", Target: under(30).because(whyNotHTTP)},
		{Name: "server alone (no client): registrations, 16 clients", Runs: srvRate, Unit: "jobs/s"},
		{Name: "server alone (no client): latency p99", Runs: srvP99, Unit: "ms"},
	}
	// One more run of each, not in the figures, with a CPU account: a
	// profile costs the agent a little CPU of its own.
	for _, acct := range []struct {
		name, what string
		start      func(string) (*agentProc, error)
	}{
		{"http-account", "the dev agent's registrations", func(name string) (*agentProc, error) { return r.devAgent(name) }},
		{"http-server-account", "the server alone's registrations", serverOnly},
	} {
		_, _, _, acc, err := measure(acct.name, acct.start, true)
		if err != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("The CPU account of %s failed: %v.", acct.what, err))
			continue
		}
		sec.Notes = append(sec.Notes, acc.markdown(acct.what+", one more run"))
		logf("   CPU account, %s: machine %.0f%% busy, agent %.2f cores", acct.what, acc.MachineBusy*100, acc.AgentCores)
	}
	mkdir := "not measured"
	if d, err := mkdirCost(r.workDir); err == nil {
		mkdir = fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000)
	}
	sec.Notes = append(sec.Notes, "Each job is a one-alloc mock_driver batch job (run_for 1ms); the dev agent places and runs them while the registrations go on, as a real cluster would. "+
		"The server-alone rows register the same jobs on `bin/nomad agent -server -bootstrap-expect 1 -data-dir DIR` (Raft on disk, fsynced), which has no client: the jobs' evaluations are processed and wait blocked. "+
		"They show the registration path without the dev node's own work, which includes creating 9 directories for each alloc; one mkdir in the bench's work directory took "+mkdir+" here (median of 900).")
	return sec
}

// mkdirCost times creating directories where the agents keep their data:
// a dev node makes 9 for every alloc, and on some filesystems that is a
// large part of what running an alloc costs.
func mkdirCost(dir string) (time.Duration, error) {
	base, err := os.MkdirTemp(dir, "mkdir-cost-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(base)
	times := make([]time.Duration, 900)
	for i := range times {
		t0 := time.Now()
		if err := os.Mkdir(filepath.Join(base, strconv.Itoa(i)), 0o755); err != nil {
			return 0, err
		}
		times[i] = time.Since(t0)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
