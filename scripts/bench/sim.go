package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

// noSim is the page's word for a node-simulator section when bin/nomad
// has no -sim-nodes flag: the section is not run and shows no figures.
const noSim = "not run: `bin/nomad agent -h` lists no `-sim-nodes` flag in this build. " +
	"The node simulator (issue 22 item 1) is built separately; once it is in, `make bench` runs this section with no other change."

// simAgent starts a dev agent whose client side is nodes simulated nodes
// and waits until that many nodes are ready; extra config (HCL) is added
// when given.
func (r *runner) simAgent(name string, nodes int, hcl string) (*agentProc, error) {
	return r.simAgentEnv(name, nodes, hcl, nil)
}

// simAgentEnv is simAgent with extra environment variables for the
// agent's process.
func (r *runner) simAgentEnv(name string, nodes int, hcl string, env []string) (*agentProc, error) {
	args := []string{"-dev", "-sim-nodes", strconv.Itoa(nodes), "-log-level", "INFO"}
	if hcl != "" {
		path := filepath.Join(r.workDir, name+".hcl")
		if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-config", path)
	}
	// One line per garbage collection in the agent's log (see gctrace.go).
	a, err := r.startAgentEnv(name, append([]string{"GODEBUG=gctrace=1"}, env...), args...)
	if err != nil {
		return nil, err
	}
	if _, err := a.waitLeader(time.Minute, nil); err != nil {
		a.stop()
		return nil, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		list, _, err := a.client.Nodes().List(nil)
		ready := 0
		for _, n := range list {
			if n.Status == "ready" {
				ready++
			}
		}
		if err == nil && ready >= nodes {
			return a, nil
		}
		if time.Now().After(deadline) {
			a.stop()
			return nil, fmt.Errorf("%d of %d simulated nodes ready after 5m", ready, nodes)
		}
		time.Sleep(time.Second)
	}
}

// c1mSection is the C1M shape: 20 batch jobs of count 1,000 registered at
// once on 5,000 simulated nodes (bin-pack), first registration to the last
// alloc's CreateTime; and the same measure for 5 jobs of count 1,000 on
// 1,000 nodes.
func (r *runner) c1mSection() section {
	type shape struct{ nodes, jobs, count int }
	shapes := []shape{{5000, 20, 1000}, {1000, 5, 1000}}
	if r.quick {
		shapes = []shape{{500, 5, 1000}, {100, 2, 1000}}
	}
	sec := section{
		Title: "End to end: the C1M shape",
		Command: fmt.Sprintf("`bin/nomad agent -dev -sim-nodes N`; %d (on %s nodes) or %d (on %s nodes) mock_driver batch jobs of count %s registered at once by the api client",
			shapes[0].jobs, commas(int64(shapes[0].nodes)), shapes[1].jobs, commas(int64(shapes[1].nodes)), commas(int64(shapes[0].count))),
	}
	if !r.simFlag {
		sec.Skipped = noSim
		return sec
	}
	var plotted *timeline
	for si, sh := range shapes {
		var rates []float64
		for run := range r.runs {
			a, err := r.simAgent(fmt.Sprintf("c1m-%d-%d", sh.nodes, run), sh.nodes, "")
			if err != nil {
				sec.Skipped = err.Error()
				return sec
			}
			list := make([]*api.Job, sh.jobs)
			for i := range list {
				list[i] = mockBatchJob(fmt.Sprintf("c1m-%d", i), sh.count, "1h")
			}
			start := time.Now()
			_, _, done, err := registerAll(a.client, list, sh.jobs)
			var last time.Time
			var allocs []*api.AllocationListStub
			if err == nil {
				allocs, last, err = waitPlaced(a.client, "c1m-", sh.jobs*sh.count, 10*time.Minute)
			}
			a.stop()
			if err != nil {
				sec.Skipped = err.Error()
				return sec
			}
			if si == 0 && run == 0 {
				registered := make(map[string]time.Time, len(list))
				for i, j := range list {
					registered[*j.ID] = done[i]
				}
				plotted = allocTimeline(start, registered, allocs, "t")
			}
			rates = append(rates, float64(sh.jobs*sh.count)/last.Sub(start).Seconds())
			logf("   %d nodes, run %d: %.0f placements/s", sh.nodes, run, rates[run])
		}
		sec.Figures = append(sec.Figures, figure{
			Name: fmt.Sprintf("%d x %s allocs on %s nodes: placements, first registration to the last alloc's CreateTime",
				sh.jobs, commas(int64(sh.count)), commas(int64(sh.nodes))),
			Runs: rates, Unit: "placements/s", Target: atLeast(3750),
		})
	}
	sec.Notes = append(sec.Notes, plotNote(plotted, fmt.Sprintf("C1M shape, first run on %s nodes: allocs per second by stage", commas(int64(shapes[0].nodes))),
		filepath.Join(r.outDir, "performance-c1m.png"), "C1M timeline: registered, placed and running per second"))
	return sec
}

// plotNote draws the timeline to path and returns the page's line for it:
// the image, or why there is none.
func plotNote(t *timeline, title, path, alt string) string {
	if err := plotTimeline(t, title, path); err != nil {
		return "The timeline plot failed: " + err.Error()
	}
	return fmt.Sprintf("![%s](%s)", alt, filepath.Base(path))
}

// waitPlaced waits until n allocs exist and returns them and the latest
// CreateTime.
func waitPlaced(c *api.Client, prefix string, n int, timeout time.Duration) ([]*api.AllocationListStub, time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		placed, err := placedCount(c, prefix)
		if err != nil {
			return nil, time.Time{}, err
		}
		if placed >= n {
			allocs, _, err := c.Allocations().List(nil)
			if err != nil {
				return nil, time.Time{}, err
			}
			var last int64
			for _, al := range allocs {
				last = max(last, al.CreateTime)
			}
			return allocs, time.Unix(0, last), nil
		}
		if time.Now().After(deadline) {
			return nil, time.Time{}, fmt.Errorf("%d of %d allocs placed after %s", placed, n, timeout)
		}
		time.Sleep(time.Second)
	}
}

// placedCount is how many allocs the jobs whose IDs start with prefix have
// (in any client status), from the job list's summaries. The harness
// polls this instead of listing every alloc: on 2 cores, encoding and
// decoding a 20,000-alloc list each second took CPU from the agent it
// measures.
func placedCount(c *api.Client, prefix string) (int, error) {
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: prefix})
	if err != nil {
		return 0, err
	}
	placed := 0
	for _, j := range jobs {
		if j.JobSummary == nil {
			continue
		}
		for _, tg := range j.JobSummary.Summary {
			placed += tg.Starting + tg.Running + tg.Complete + tg.Failed + tg.Lost + tg.Unknown
		}
	}
	return placed, nil
}

// rampSection is many small jobs: one-alloc batch jobs offered at rising
// rates (each step five seconds) on 100 and 1,000 simulated nodes, queue
// off and on (concurrent_placements 8 and 64). A step is sustained when
// every job of it is placed and the p99 from registration to placed is
// under 1 s; the figure is the highest sustained rate. Once a step fails,
// one more step halfway between it and the last sustained one refines
// the figure: the ladder's gaps (500 to 750 is 1.5x) are wider than the
// 1.25x the queue is held to.
func (r *runner) rampSection() section {
	// 750 splits the wide gap between 500 and 1,000, where the figure
	// has been since the watch fixes.
	steps := []int{50, 100, 200, 500, 750, 1000, 1500, 2000}
	sec := section{
		Title:   "End to end: many small jobs",
		Command: "`bin/nomad agent -dev -sim-nodes N`; one-alloc mock_driver batch jobs offered at 50, 100, 200, 500, 750, 1,000, 1,500, 2,000 jobs/s, 5 s a step, then one step halfway between the first failing step and the last sustained one",
	}
	if !r.simFlag {
		sec.Skipped = noSim
		return sec
	}
	queue := func(cp int) string {
		return fmt.Sprintf("server {\n  default_scheduler_config {\n    batch_queue {\n      enabled = true\n      concurrent_placements = %d\n    }\n  }\n}\n", cp)
	}
	var plotted *timeline
	var off float64 // the median with the queue off, 1,000 nodes
	var account string
	// gcNotes say what the garbage collector did during each failing
	// step of the 1,000-node, queue-off runs.
	var gcNotes []string
	type rampMode struct {
		name string
		hcl  string
		env  []string // for the agent's process
	}
	modes := []rampMode{{name: "queue off"}, {name: "queue on, concurrent_placements 8", hcl: queue(8)}, {name: "queue on, concurrent_placements 64", hcl: queue(64)}}
	for _, nodes := range []int{100, 1000} {
		if nodes == 1000 {
			// Not a target figure: how far the collector's share moves
			// the rate. GOGC=200 lets the heap grow to three times the
			// live heap between collections instead of two, so the
			// collector runs half as often (see the GC notes below).
			modes = append(modes, rampMode{name: "queue off, GOGC=200 (informational)", env: []string{"GOGC=200"}})
		}
		for _, mode := range modes {
			var best []float64
			// Default settings: the runs whose figures carry targets.
			plain := mode.hcl == "" && mode.env == nil
			for run := range r.runs {
				a, err := r.simAgentEnv(fmt.Sprintf("ramp-%d-%d", nodes, run), nodes, mode.hcl, mode.env)
				if err != nil {
					sec.Skipped = err.Error()
					return sec
				}
				sustained := 0.0
				// The timeline of one run (1,000 nodes, queue off, the
				// first) goes on the page, all its steps in one plot.
				var registered map[string]time.Time
				if nodes == 1000 && plain && run == 0 {
					registered = make(map[string]time.Time)
				}
				start := time.Now()
				failed := 0
				for si, rate := range steps {
					from := time.Since(a.started)
					p99, ok, err := offer(a.client, fmt.Sprintf("ramp-%d-", si), rate, 5*time.Second, registered)
					if err != nil || !ok || p99 >= time.Second {
						if err == nil {
							failed = si
							if nodes == 1000 && plain {
								outcome := fmt.Sprintf("p99 %s", p99.Round(time.Millisecond))
								if !ok {
									outcome = "not every job placed within 30 s"
								}
								gcNotes = append(gcNotes, fmt.Sprintf("run %d, %s jobs/s (%s): %s", run+1, commas(int64(rate)), outcome,
									gcDuring(a.gcLog(), from, time.Since(a.started))))
							}
						}
						break
					}
					sustained = float64(rate)
				}
				if failed > 0 && sustained > 0 {
					// The refining step starts once the failed step's
					// jobs are all placed, on an agent holding every
					// job so far: if anything, harder than the ladder.
					mid := (int(sustained) + steps[failed] + 1) / 2
					if idle(a.client, fmt.Sprintf("ramp-%d-", failed), steps[failed]*5, time.Minute) {
						p99, ok, err := offer(a.client, "ramp-refine-", mid, 5*time.Second, registered)
						if err == nil && ok && p99 < time.Second {
							sustained = float64(mid)
						}
					}
				}
				if registered != nil {
					if allocs, _, err := a.client.Allocations().List(nil); err == nil {
						plotted = allocTimeline(start, registered, allocs, "t")
					}
				}
				a.stop()
				best = append(best, sustained)
			}
			f := figure{Name: fmt.Sprintf("%s nodes, %s: highest sustained rate", commas(int64(nodes)), mode.name), Runs: best, Unit: "jobs/s"}
			if nodes == 1000 && plain {
				f.Target = atLeast(1000).because(whyNotSmallJobs)
				off = median(best)
				account = r.rampAccount(nodes, 1000)
			}
			if nodes == 1000 && mode.name == "queue on, concurrent_placements 64" {
				f.Target = withinOf(off, 1.25).because(whyNotSmallJobs)
			}
			sec.Figures = append(sec.Figures, f)
		}
	}
	if account != "" {
		sec.Notes = append(sec.Notes, account)
	}
	sec.Notes = append(sec.Notes, "The GOGC=200 runs carry no target: the same ladder on 1,000 nodes, queue off, with the agent's collector letting the heap grow to three times the live heap between collections instead of two, so that it collects half as often for a larger peak heap (about 640 MB against 440 MB at the 1,000 jobs/s step after 9,000 jobs, in the runs of website/performance-notes.md). They show how much of the gap to 1,000 jobs/s is the collector's share of two cores.")
	if len(gcNotes) > 0 {
		sec.Notes = append(sec.Notes, "The agent's garbage collector (`GODEBUG=gctrace=1`) during the first failing step of each 1,000-node, queue-off run, from the step's first registration until its jobs were placed. The agent then holds every job of the earlier steps, and a mark phase's length grows with that live heap; while a mark runs the collector takes about three quarters of a core, and in the traces of website/performance-notes.md the step's latency rose in waves, each during a mark.\n\n- "+strings.Join(gcNotes, "\n- "))
	}
	sec.Notes = append(sec.Notes, plotNote(plotted, "Many small jobs, 1,000 nodes, queue off, first run: allocs per second by stage",
		filepath.Join(r.outDir, "performance-ramp.png"), "Many small jobs timeline: registered, placed, running and complete per second over the rising steps"))
	return sec
}

// rampAccount is one more run, not in the figures: a fresh agent with
// nodes simulated nodes, offered rate jobs/s for 5 s (the target's rate)
// under a CPU account, from the step's start until its jobs are placed.
func (r *runner) rampAccount(nodes, rate int) string {
	what := fmt.Sprintf("%s jobs/s offered for 5 s to a fresh agent with %s simulated nodes, queue off, until all placed", commas(int64(rate)), commas(int64(nodes)))
	a, err := r.simAgent("ramp-account", nodes, "")
	if err != nil {
		return fmt.Sprintf("The CPU account of %s failed: %v.", what, err)
	}
	defer a.stop()
	pr := startAccount(a, 5)
	p99, ok, err := offer(a.client, "account-", rate, 5*time.Second, nil)
	acc := pr.finish(rate * 5)
	if err != nil {
		return fmt.Sprintf("The CPU account of %s failed: %v.", what, err)
	}
	logf("   CPU account, %d jobs/s on %d nodes: machine %.0f%% busy, agent %.2f cores, p99 %s", rate, nodes, acc.MachineBusy*100, acc.AgentCores, p99.Round(time.Millisecond))
	outcome := fmt.Sprintf(" In this run the p99 from registration to placement was %s.", p99.Round(time.Millisecond))
	if !ok {
		outcome = " In this run not every job was placed within 30 s of the step's end."
	}
	return acc.markdown(what) + "\n\n" + strings.TrimSpace(outcome)
}

// withinOf is the queue's bound: a rate no worse than factor times
// slower than base.
func withinOf(base, factor float64) *target {
	return &target{Text: fmt.Sprintf("≥ %s (queue off / %s)", num(base/factor), num(factor)),
		Check: func(x float64) bool { return x*factor >= base }}
}

// idle waits until n jobs of prefix have their alloc placed, and reports
// whether they did within timeout.
func idle(c *api.Client, prefix string, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		placed, err := placedCount(c, prefix)
		if err == nil && placed >= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// offer registers one-alloc jobs at rate per second for d, and returns
// the p99 from each registration's return to its alloc's CreateTime, and
// whether every job was placed within 30 s of the step's end. Each job's
// registration time is also put in into, when it is not nil.
func offer(c *api.Client, prefix string, rate int, d time.Duration, into map[string]time.Time) (time.Duration, bool, error) {
	n := int(float64(rate) * d.Seconds())
	interval := time.Second / time.Duration(rate)
	registered := make(map[string]time.Time, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	start := time.Now()
	var firstErr error
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			id := fmt.Sprintf("%s%d", prefix, i)
			_, _, err := c.Jobs().Register(mockBatchJob(id, 1, "50ms"), nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			registered[id] = time.Now()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, false, firstErr
	}
	if into != nil {
		maps.Copy(into, registered)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		placed, err := placedCount(c, prefix)
		if err != nil {
			return 0, false, err
		}
		if placed < n {
			if time.Now().After(deadline) {
				return 0, false, nil
			}
			time.Sleep(500 * time.Millisecond)
			continue
		}
		allocs, _, err := c.Allocations().List(nil)
		if err != nil {
			return 0, false, err
		}
		var lat []time.Duration
		for _, al := range allocs {
			if t, ok := registered[al.JobID]; ok {
				lat = append(lat, time.Unix(0, al.CreateTime).Sub(t))
			}
		}
		if len(lat) >= n {
			slices.Sort(lat)
			return quantile(lat, 0.99), true, nil
		}
		if time.Now().After(deadline) {
			return 0, false, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}
