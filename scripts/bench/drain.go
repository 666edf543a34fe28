package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// timeline is when each alloc of a run went through each stage.
type timeline struct {
	start      time.Time // the first registration's start
	registered []time.Time
	placed     []time.Time // alloc CreateTime
	running    []time.Time // the task's StartedAt
	complete   []time.Time // alloc ModifyTime once complete (as the server saw it)
}

// end is the last event of any stage.
func (t *timeline) end() time.Time {
	var last time.Time
	for _, stage := range [][]time.Time{t.registered, t.placed, t.running, t.complete} {
		for _, e := range stage {
			if e.After(last) {
				last = e
			}
		}
	}
	return last
}

// lastComplete is the last completion.
func (t *timeline) lastComplete() time.Time {
	return slices.MaxFunc(t.complete, func(a, b time.Time) int { return a.Compare(b) })
}

// allocTimeline builds a timeline from a listing of allocs: placed is each
// alloc's CreateTime, running its task's StartedAt, complete its
// ModifyTime once complete; registered is its job's registration time
// (the map is by job ID; allocs of other jobs are left out).
func allocTimeline(start time.Time, registered map[string]time.Time, allocs []*api.AllocationListStub, task string) *timeline {
	t := &timeline{start: start}
	for _, al := range allocs {
		reg, ok := registered[al.JobID]
		if !ok {
			continue
		}
		t.registered = append(t.registered, reg)
		t.placed = append(t.placed, time.Unix(0, al.CreateTime))
		var running, complete time.Time
		if ts := al.TaskStates[task]; ts != nil {
			running = ts.StartedAt
		}
		if al.ClientStatus == "complete" {
			complete = time.Unix(0, al.ModifyTime)
		}
		t.running = append(t.running, running)
		t.complete = append(t.complete, complete)
	}
	return t
}

// drainSection is the single dev node drain: 1,000 one-alloc mock_driver
// batch jobs of 50 ms each, registered by 16 api clients against one dev
// agent (logging as `-dev` does), three drains in a row on the same agent
// for the figures, then two more on it to show whether RSS keeps growing
// after the first drains; the agent's RSS after a GC, after each drain.
func (r *runner) drainSection() section {
	n := 1000
	if r.quick {
		n = 200
	}
	measured := max(r.runs, 3)
	const more = 2
	sec := section{
		Title:   "Single dev node drain",
		Command: fmt.Sprintf("`bin/nomad agent -dev` (its default DEBUG logging to a file); %s one-alloc mock_driver batch jobs (run_for 50ms) registered by 16 api clients, %d drains in a row on the same agent (the figures are the first %d; the last %d show whether memory keeps growing)", commas(int64(n)), measured+more, measured, more),
	}
	var rates, rss, heap, stacks, anon, file, threads []float64
	var tl *timeline
	a, err := r.devAgent("drain")
	if err != nil {
		sec.Skipped = err.Error()
		return sec
	}
	defer a.stop()
	for run := range measured + more {
		t, err := drain(a.client, fmt.Sprintf("drain-%d-", run), n)
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		if tl == nil {
			tl = t
		}
		rate := float64(n) / t.lastComplete().Sub(t.start).Seconds()
		if err := systemGC(a.client, fmt.Sprintf("drain-%d-", run)); err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		st, mem, err := a.memAfterGC()
		if err != nil {
			sec.Skipped = err.Error()
			return sec
		}
		rates = append(rates, rate)
		rss = append(rss, st.VmRSS/(1<<20))
		anon = append(anon, st.RssAnon/(1<<20))
		file = append(file, st.RssFile/(1<<20))
		threads = append(threads, float64(st.Threads))
		heap = append(heap, mem.HeapAlloc/(1<<20))
		stacks = append(stacks, mem.StackInuse/(1<<20))
		logf("   drain %d: %.0f allocs/s, RSS after GC %.0f MiB (anonymous %.1f, file %.1f; Go heap %.1f, stacks %.1f; %d threads)",
			run, rate, st.VmRSS/(1<<20), st.RssAnon/(1<<20), st.RssFile/(1<<20), mem.HeapAlloc/(1<<20), mem.StackInuse/(1<<20), st.Threads)
	}
	first := rss[:measured]
	sec.Figures = []figure{
		{Name: "drain throughput", Runs: rates[:measured], Unit: "allocs/s", Target: atLeast(500)},
		{Name: "agent RSS after the drain and a system GC", Runs: first, Unit: "MiB", Target: under(100)},
	}
	growth := first[len(first)-1] - first[0]
	sec.Figures = append(sec.Figures, figure{
		Name: fmt.Sprintf("RSS growth, first to last drain (drains 1-%d)", measured), Runs: []float64{growth}, Unit: "MiB",
		Target: &target{Text: "flat (< 10% of the first)", Check: func(x float64) bool { return x < 0.1*first[0] }, WhyNot: whyNotDrainGrowth},
	})
	last := len(rss) - 1
	sec.Figures = append(sec.Figures,
		figure{Name: fmt.Sprintf("RSS growth over the %d drains after those (drains %d-%d)", more, measured, last+1), Runs: []float64{rss[last] - rss[measured-1]}, Unit: "MiB"},
		figure{Name: "Go heap in use (HeapAlloc) after the drain and a system GC", Runs: heap[:measured], Unit: "MiB"},
		figure{Name: fmt.Sprintf("Go heap growth, first to last drain (drains 1-%d)", measured), Runs: []float64{heap[measured-1] - heap[0]}, Unit: "MiB"},
		figure{Name: "goroutine stack spans (StackInuse) after the drain and a system GC", Runs: stacks[:measured], Unit: "MiB"})
	sec.Notes = append(sec.Notes,
		"The Go heap and stack figures are the runtime's own account (the memory statistics of the heap profile taken after the collections): a live heap that stays flat while RSS grows is memory the runtime keeps (stack spans, heap pages not yet returned), not objects the agent holds on to.",
		"Throughput is allocs completed over the time from the first registration to the last alloc seen complete by the server. The RSS figure is the process's VmRSS after `nomad system gc` has collected the drain's jobs, evals and allocs, then two forced collections (binary heap profiles with gc=1) a second apart; the Go heap and stack figures come from a text heap profile fetched after RSS is read, so that its text (a few MiB after a drain) is not in the RSS.",
		fmt.Sprintf("Per-drain values, in order, all %d drains: %s allocs/s; RSS %s MiB, of which anonymous pages %s and file pages (the binary's code) %s; Go heap %s MiB; stacks %s MiB; OS threads %s.",
			len(rss), list(rates), list(rss), list(anon), list(file), list(heap), list(stacks), list(threads)))
	png := "performance-drain.png"
	if err := plotTimeline(tl, "Single dev node drain, first run: allocs per second by stage", filepath.Join(r.outDir, png)); err != nil {
		sec.Notes = append(sec.Notes, "The timeline plot failed: "+err.Error())
	} else {
		sec.Notes = append(sec.Notes, fmt.Sprintf("![Drain timeline: registered, placed, running and complete per second](%s)", png))
	}
	sec.Notes = append(sec.Notes, stageSummary(tl))
	return sec
}

func list(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = num(x)
	}
	return strings.Join(s, ", ")
}

// stageSummary gives the median time between stages, per alloc.
func stageSummary(t *timeline) string {
	med := func(from, to []time.Time) time.Duration {
		var ds []time.Duration
		for i := range from {
			if !from[i].IsZero() && !to[i].IsZero() {
				ds = append(ds, to[i].Sub(from[i]))
			}
		}
		slices.Sort(ds)
		return quantile(ds, 0.5)
	}
	return fmt.Sprintf("Median per alloc in the first drain: registration to placed %s, placed to running %s, running to complete %s.",
		med(t.registered, t.placed).Round(time.Millisecond), med(t.placed, t.running).Round(time.Millisecond), med(t.running, t.complete).Round(time.Millisecond))
}

// drain registers n one-alloc jobs named prefix+i and waits for every
// alloc to complete.
func drain(c *api.Client, prefix string, n int) (*timeline, error) {
	jobs := make([]*api.Job, n)
	for i := range jobs {
		jobs[i] = mockBatchJob(fmt.Sprintf("%s%d", prefix, i), 1, "50ms")
	}
	start := time.Now()
	_, _, done, err := registerAll(c, jobs, 16)
	if err != nil {
		return nil, err
	}
	byJob := make(map[string]int, n)
	for i, j := range jobs {
		byJob[*j.ID] = i
	}
	t := &timeline{start: start, registered: done,
		placed: make([]time.Time, n), running: make([]time.Time, n), complete: make([]time.Time, n)}
	// While the drain runs, ask only for this drain's unfinished allocs
	// (a small answer, so watching costs the agent little); once none is
	// left, read them all for the timeline.
	unfinished := &api.QueryOptions{Filter: fmt.Sprintf(`ClientStatus != "complete" and JobID matches "^%s"`, prefix)}
	all := &api.QueryOptions{Filter: fmt.Sprintf(`JobID matches "^%s"`, prefix)}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		time.Sleep(time.Second)
		pending, _, err := c.Allocations().List(unfinished)
		if err != nil {
			return nil, err
		}
		left := 0
		for _, al := range pending {
			if _, ok := byJob[al.JobID]; ok && al.ClientStatus != "complete" {
				left++
			}
		}
		if left > 0 && time.Now().Before(deadline) {
			continue
		}
		allocs, _, err := c.Allocations().List(all)
		if err != nil {
			return nil, err
		}
		finished := 0
		for _, al := range allocs {
			i, ok := byJob[al.JobID]
			if !ok {
				continue
			}
			t.placed[i] = time.Unix(0, al.CreateTime)
			if ts := al.TaskStates["t"]; ts != nil && !ts.StartedAt.IsZero() {
				t.running[i] = ts.StartedAt
			}
			switch al.ClientStatus {
			case "complete":
				t.complete[i] = time.Unix(0, al.ModifyTime)
				finished++
			case "failed", "lost":
				return nil, fmt.Errorf("alloc %s of %s: %s", al.ID, al.JobID, al.ClientStatus)
			}
		}
		if finished == n {
			return t, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d allocs complete after 5m", finished, n)
		}
	}
}

// systemGC runs the servers' garbage collection (`nomad system gc`) and
// waits until the drain's jobs are gone, so that the RSS after a drain is
// measured without its state, as an operator's cluster would run.
func systemGC(c *api.Client, prefix string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := c.System().GarbageCollect(); err != nil {
			return fmt.Errorf("system gc: %w", err)
		}
		jobs, _, err := c.Jobs().PrefixList(prefix)
		if err != nil {
			return fmt.Errorf("list jobs after system gc: %w", err)
		}
		if len(jobs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("system gc: %d jobs of %s* still there after 2m", len(jobs), prefix)
		}
		time.Sleep(time.Second)
	}
	// The client drops its alloc runners once it sees the servers have
	// collected their allocs, a little after: until then it still holds
	// them (one drain's worth was 11 MiB of live heap in one run).
	for {
		n, err := clientAllocs(c)
		if err != nil {
			return fmt.Errorf("system gc: %w", err)
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("system gc: the client still holds %d allocs after 2m", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clientAllocs is how many allocs the agent's client still holds, in any
// state (its nomad.client.allocations gauges).
func clientAllocs(c *api.Client) (int, error) {
	raw, err := c.Operator().Metrics(nil)
	if err != nil {
		return 0, fmt.Errorf("read metrics: %w", err)
	}
	return parseClientAllocs(raw)
}

func parseClientAllocs(raw []byte) (int, error) {
	var m api.MetricsSummary
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, fmt.Errorf("decode metrics: %w", err)
	}
	n, found := 0.0, 0
	for _, g := range m.Gauges {
		switch g.Name {
		case "nomad.client.allocations.pending", "nomad.client.allocations.running", "nomad.client.allocations.terminal":
			n += float64(g.Value)
			found++
		}
	}
	if found == 0 {
		return 0, fmt.Errorf("no nomad.client.allocations gauges in the agent's metrics")
	}
	return int(n), nil
}
