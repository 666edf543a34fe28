// Command drainbench measures the single dev node drain: it starts
// `nomad agent -dev` (logs on, written to a file), registers many
// single-alloc mock_driver batch jobs at once over HTTP with the official
// api client, waits until every alloc is complete, and prints the drain
// rate, the per-stage medians taken from the allocs' own times and task
// events, and the agent's RSS after a forced state and runtime GC.
//
//	go build -o bin/nomad ./cmd/nomad
//	(cd scripts && go build -o ../bin/drainbench ./drainbench)
//	bin/drainbench -drains 3
//
// It is built from the tooling module (scripts/go.mod) and run from the
// repo root, where its -bin default, bin/nomad, is.
//
// Stages: submit (the driver's clock when it sent the registration) ->
// eval created -> placed (alloc CreateTime) -> received (the task's
// Received event) -> started -> terminated -> server saw complete (alloc
// ModifyTime). With -cpuprofile the agent's CPU profile over the first
// drain is written to that file.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
)

type options struct {
	bin            string
	jobs           int
	workers        int
	runFor         time.Duration
	drains         int
	cpuProfile     string
	profileSeconds int
	heapProfile    string
	cpu, memoryMB  int
	metrics        bool
	extraConfig    string
	diskMB         int
	logFile        string
	timeout        time.Duration
	smaps          bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/nomad", "the nomad binary to start")
	flag.IntVar(&o.jobs, "jobs", 1000, "jobs per drain (one alloc each)")
	flag.IntVar(&o.workers, "workers", 16, "concurrent registering clients")
	flag.DurationVar(&o.runFor, "run-for", 50*time.Millisecond, "mock_driver run_for of each task")
	flag.IntVar(&o.drains, "drains", 1, "drains to run one after another against the same agent")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write the agent's CPU profile over the first drain here")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 10, "length of the CPU profile")
	flag.StringVar(&o.heapProfile, "heapprofile", "", "write the agent's heap profile after the last drain's GC here (and after earlier drains' to this path with .1, .2, ... appended)")
	flag.IntVar(&o.cpu, "cpu", 4, "cpu (MHz) each task asks for (4 lets 1,000 fit a 4,192 MHz node at once)")
	flag.IntVar(&o.memoryMB, "memory", 10, "memory (MB) each task asks for")
	flag.IntVar(&o.diskMB, "disk", 10, "ephemeral_disk (MB) each group asks for; Nomad's default of 300 makes the node's disk, not the pipeline, the limit")
	flag.BoolVar(&o.metrics, "metrics", false, "print the agent's plan, worker and raft timing summaries after each drain")
	flag.StringVar(&o.extraConfig, "agent-config", "", "extra agent configuration (HCL) appended to the generated file")
	flag.StringVar(&o.logFile, "log", "", "agent log file (default: a temporary file)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up on a drain after this long")
	flag.BoolVar(&o.smaps, "smaps", false, "after each drain, print the agent's resident memory per mapping (from /proc/PID/smaps)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "drainbench:", err)
		os.Exit(1)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func run(o options) error {
	dir, err := os.MkdirTemp("", "drainbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	cfg := filepath.Join(dir, "agent.hcl")
	hcl := fmt.Sprintf("ports {\n  http = %d\n  rpc = %d\n  serf = %d\n}\n", ports[0], ports[1], ports[2])
	hcl += o.extraConfig + "\n"
	if err := os.WriteFile(cfg, []byte(hcl), 0o644); err != nil {
		return err
	}
	if o.logFile == "" {
		o.logFile = filepath.Join(dir, "agent.log")
	}
	logf, err := os.Create(o.logFile)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(o.bin, "agent", "-dev", "-config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	addr := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	c, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		return err
	}
	if err := waitReady(c, 60*time.Second); err != nil {
		return err
	}
	fmt.Printf("agent %s pid %d, log %s\n", addr, cmd.Process.Pid, o.logFile)
	fmt.Printf("RSS after start: %d MB (%s)\n", rssMB(cmd.Process.Pid), rssParts(cmd.Process.Pid))
	for d := 0; d < o.drains; d++ {
		var prof *profile
		if d == 0 && o.cpuProfile != "" {
			prof = startProfile(addr, o.cpuProfile, o.profileSeconds)
		}
		if err := drain(c, o, d, cmd.Process.Pid); err != nil {
			return err
		}
		if prof != nil {
			if err := prof.stop(); err != nil {
				return err
			}
			fmt.Printf("cpu profile written to %s\n", o.cpuProfile)
		}
		if o.metrics {
			printTimings(c)
		}
		if err := c.System().GarbageCollect(); err != nil {
			return fmt.Errorf("system gc: %w", err)
		}
		// The GC runs as a core eval after the call returns: wait until
		// the drained jobs are gone.
		gcStart := time.Now()
		for {
			jobs, _, err := c.Jobs().List(nil)
			if err != nil {
				return err
			}
			if len(jobs) == 0 {
				break
			}
			if time.Since(gcStart) > 30*time.Second {
				return fmt.Errorf("%d jobs left 30s after the system GC", len(jobs))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if al, _, err := c.Allocations().List(nil); err == nil {
			if ev, _, err := c.Evaluations().List(nil); err == nil {
				fmt.Printf("drain %d: after the system GC: %d allocs, %d evals in state\n", d+1, len(al), len(ev))
			}
		}
		// ?gc=1 runs the agent's runtime GC before the heap profile.
		var heap bytes.Buffer
		if err := get(addr+"/v1/agent/pprof/heap?gc=1", &heap); err != nil {
			return err
		}
		if o.heapProfile != "" {
			path := o.heapProfile
			if d < o.drains-1 {
				path = fmt.Sprintf("%s.%d", o.heapProfile, d+1)
			}
			if err := os.WriteFile(path, heap.Bytes(), 0o644); err != nil {
				return err
			}
		}
		time.Sleep(2 * time.Second)
		var stats bytes.Buffer
		if err := get(addr+"/v1/agent/pprof/heap?debug=1", &stats); err == nil {
			var parts []string
			for _, line := range strings.Split(stats.String(), "\n") {
				for _, k := range []string{"# HeapAlloc", "# HeapInuse", "# HeapIdle", "# HeapReleased", "# Sys", "# StackInuse", "# NumGC"} {
					if strings.HasPrefix(line, k+" ") {
						parts = append(parts, strings.TrimPrefix(line, "# "))
					}
				}
			}
			fmt.Printf("drain %d: runtime: %s\n", d+1, strings.Join(parts, ", "))
		}
		fmt.Printf("drain %d: RSS after state GC and runtime GC: %d MB (%s)\n", d+1, rssMB(cmd.Process.Pid), rssParts(cmd.Process.Pid))
		if o.smaps {
			fmt.Print(smapsSummary(cmd.Process.Pid))
		}
	}
	return nil
}

func waitReady(c *api.Client, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		nodes, _, err := c.Nodes().List(nil)
		if err == nil {
			for _, n := range nodes {
				if n.Status == "ready" {
					return nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("agent's node not ready within " + within.String())
}

// cpuSeconds is the process's user plus system CPU time so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at ")".
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ is 100 on Linux
}

func rssMB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return -1
}

// rssParts says what the RSS is made of: anonymous memory (the Go heap,
// stacks) and file pages (the binary's text, bbolt's mmap).
func rssParts(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	var parts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && (f[0] == "RssAnon:" || f[0] == "RssFile:" || f[0] == "RssShmem:") {
			kb, _ := strconv.Atoi(f[1])
			parts = append(parts, fmt.Sprintf("%s %d MB", strings.TrimSuffix(f[0], ":"), kb/1024))
		}
	}
	return strings.Join(parts, ", ")
}

// smapsSummary lists the agent's mappings by resident size, largest
// first, with their names (the binary, bbolt files, anonymous memory).
func smapsSummary(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return "smaps: " + err.Error() + "\n"
	}
	type mapping struct {
		name    string
		rss, sz int
	}
	byName := map[string]*mapping{}
	var cur *mapping
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			name := "[anon]"
			if len(f) >= 6 {
				name = f[5]
			}
			if byName[name] == nil {
				byName[name] = &mapping{name: name}
			}
			cur = byName[name]
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		kb, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "Rss:":
			cur.rss += kb
		case "Size:":
			cur.sz += kb
		}
	}
	var all []*mapping
	for _, m := range byName {
		all = append(all, m)
	}
	slices.SortFunc(all, func(a, b *mapping) int { return b.rss - a.rss })
	var out strings.Builder
	for i, m := range all {
		if i == 8 || m.rss < 512 {
			break
		}
		fmt.Fprintf(&out, "   %8d kB resident of %8d kB  %s\n", m.rss, m.sz, m.name)
	}
	return out.String()
}

func get(url string, w io.Writer) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// profile is a CPU profile the agent records until stop.
type profile struct {
	path string
	buf  bytes.Buffer
	err  error
	done chan struct{}
}

func startProfile(addr, path string, seconds int) *profile {
	p := &profile{path: path, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = get(fmt.Sprintf("%s/v1/agent/pprof/profile?seconds=%d", addr, seconds), &p.buf)
	}()
	return p
}

func (p *profile) stop() error {
	<-p.done
	if p.err != nil {
		return p.err
	}
	return os.WriteFile(p.path, p.buf.Bytes(), 0o644)
}

func drain(c *api.Client, o options, round, pid int) error {
	cpu0 := cpuSeconds(pid)
	submitted := make([]time.Time, o.jobs)
	ids := make([]string, o.jobs)
	for i := range ids {
		ids[i] = fmt.Sprintf("drain-%d-%d", round, i)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.workers)
	start := time.Now()
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= o.jobs {
					return
				}
				submitted[i] = time.Now()
				if _, _, err := c.Jobs().Register(job(ids[i], o), nil); err != nil {
					errs <- fmt.Errorf("register %s: %w", ids[i], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	registered := time.Since(start)
	select {
	case err := <-errs:
		return err
	default:
	}
	prefix := fmt.Sprintf("drain-%d-", round)
	var allocs []*api.AllocationListStub
	deadline := start.Add(o.timeout)
	// Poll the light listing (no task states) twice a second: a blocking
	// query would wake on every one of the thousands of alloc changes and
	// make the agent serialize the whole listing each time. The figures
	// come from the allocs' own times, so the polling period does not
	// change them.
	light := &api.QueryOptions{Params: map[string]string{"task_states": "false"}}
	for {
		list, _, err := c.Allocations().List(light)
		if err != nil {
			return err
		}
		allocs = allocs[:0]
		done := 0
		for _, a := range list {
			if !strings.HasPrefix(a.JobID, prefix) {
				continue
			}
			allocs = append(allocs, a)
			if a.ClientStatus == "complete" || a.ClientStatus == "failed" || a.ClientStatus == "lost" {
				done++
			}
		}
		if done >= o.jobs {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drain %d: %d of %d allocs terminal after %v", round+1, done, o.jobs, o.timeout)
		}
		time.Sleep(500 * time.Millisecond)
	}
	cpu := cpuSeconds(pid) - cpu0
	full, _, err := c.Allocations().List(nil)
	if err != nil {
		return err
	}
	allocs = allocs[:0]
	for _, a := range full {
		if strings.HasPrefix(a.JobID, prefix) {
			allocs = append(allocs, a)
		}
	}
	evals, _, err := c.Evaluations().List(nil)
	if err != nil {
		return err
	}
	evalCreate := map[string]int64{}
	for _, e := range evals {
		if strings.HasPrefix(e.JobID, prefix) && e.TriggeredBy == "job-register" {
			evalCreate[e.JobID] = e.CreateTime
		}
	}
	sub := map[string]time.Time{}
	for i, id := range ids {
		sub[id] = submitted[i]
	}
	var first, last time.Time
	stages := map[string][]time.Duration{}
	order := []string{"submit->eval", "eval->placed", "placed->received", "received->started", "started->terminated", "terminated->server", "submit->complete"}
	failed := 0
	for _, a := range allocs {
		if a.ClientStatus != "complete" {
			failed++
		}
		ts := a.TaskStates["t"]
		if ts == nil {
			continue
		}
		ev := map[string]time.Time{}
		for _, e := range ts.Events {
			if _, ok := ev[e.Type]; !ok {
				ev[e.Type] = time.Unix(0, e.Time)
			}
		}
		s, placed, server := sub[a.JobID], time.Unix(0, a.CreateTime), time.Unix(0, a.ModifyTime)
		add := func(name string, from, to time.Time) {
			if !from.IsZero() && !to.IsZero() {
				stages[name] = append(stages[name], to.Sub(from))
			}
		}
		var evalT time.Time
		if t, ok := evalCreate[a.JobID]; ok {
			evalT = time.Unix(0, t)
		}
		add("submit->eval", s, evalT)
		add("eval->placed", evalT, placed)
		add("placed->received", placed, ev["Received"])
		add("received->started", ev["Received"], ev["Started"])
		add("started->terminated", ev["Started"], ev["Terminated"])
		add("terminated->server", ev["Terminated"], server)
		add("submit->complete", s, server)
		if first.IsZero() || placed.Before(first) {
			first = placed
		}
		if server.After(last) {
			last = server
		}
	}
	total := last.Sub(start)
	fmt.Printf("drain %d: %d jobs registered in %v (%.0f/s); all complete after %v: %.0f allocs/s (%d not complete); agent CPU %.1f s (%.1f ms per alloc)\n",
		round+1, o.jobs, registered.Round(time.Millisecond), float64(o.jobs)/registered.Seconds(),
		total.Round(time.Millisecond), float64(len(allocs))/total.Seconds(), failed, cpu, cpu*1000/float64(len(allocs)))
	for _, name := range order {
		ds := stages[name]
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		q := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))].Round(100 * time.Microsecond) }
		fmt.Printf("  %-20s p50 %-10v p90 %-10v max %v\n", name, q(0.5), q(0.9), q(1))
	}
	return nil
}

func job(id string, o options) *api.Job {
	j := api.NewBatchJob(id, id, "global", 50)
	j.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	t := api.NewTask("t", "mock_driver")
	t.Config = map[string]any{"run_for": o.runFor.String()}
	t.Require(&api.Resources{CPU: new(o.cpu), MemoryMB: new(o.memoryMB)})
	tg.EphemeralDisk = &api.EphemeralDisk{SizeMB: new(o.diskMB)}
	// Task logs must fit the disk: 2 files of 1 MB.
	t.LogConfig = &api.LogConfig{MaxFiles: new(2), MaxFileSizeMB: new(1)}
	tg.AddTask(t)
	j.AddTaskGroup(tg)
	return j
}

// printTimings prints the agent's timing samples of the server pipeline
// (Nomad's /v1/metrics JSON: Name, Count, Mean in ms) of the last interval.
func printTimings(c *api.Client) {
	raw, err := c.Operator().Metrics(nil)
	var m api.MetricsSummary
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		fmt.Println("metrics:", err)
		return
	}
	for _, s := range m.Samples {
		for _, p := range []string{"nomad.plan.", "nomad.worker.", "nomad.raft.apply", "nomad.nomad.plan.", "nomad.nomad.worker.", "nomad.nomad.raft.apply"} {
			if strings.HasPrefix(s.Name, p) {
				fmt.Printf("  metric %-45s count %-6d mean %.2f ms max %.2f ms\n", s.Name, s.Count, s.Mean, s.Max)
				break
			}
		}
	}
}
