package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
)

// A CPU account says where the CPU went during one measured window: how
// busy the machine was, how much of it the agent and the bench's own
// driver used, and, from a CPU profile of the agent taken over the same
// window, which part of the agent used it. It is what lets the page say
// why a throughput target is not met: a window whose work needs more
// than the machine's cores cannot go faster by waiting less.

// component is one part of the agent a CPU sample is charged to: the
// first component, in this order, one of whose frames the sample's stack
// holds (so the FSM's store writes count as the FSM, and a node's RPC into
// the server counts as the server endpoint).
type component struct {
	name  string
	match func(fn string) bool
}

func has(sub string) func(string) bool {
	return func(fn string) bool { return strings.Contains(fn, sub) }
}

const mod = "github.com/nomadq/nomadq/"

var components = []component{
	{"garbage collector (background marking)", has("runtime.gcBgMarkWorker")},
	{"FSM (applying Raft entries to the state store)", has(mod + "nomad.(*nomadFSM).")},
	{"Raft (log store, commit, leader loop)", has("github.com/hashicorp/raft.")},
	{"scheduler workers", has(mod + "nomad.(*worker).")},
	{"plan applier", has(mod + "nomad.(*Server).planApply")},
	{"batch queue loop", has(mod + "nomad/batchqueue.")},
	{"server RPC endpoints (from HTTP, nodes, in process)", has("net/rpc.")},
	{"HTTP API (routing, JSON)", func(fn string) bool {
		return strings.HasPrefix(fn, mod+"agent.") || strings.HasPrefix(fn, "net/http.")
	}},
	{"simulated nodes", has(mod + "client/sim.")},
	{"client (alloc runners of the dev node)", func(fn string) bool { return strings.HasPrefix(fn, mod+"client") }},
	{"other server and agent work", has(mod)},
}

const otherComponent = "runtime and the rest (scheduling, syscalls, timers)"

// gcFrames mark a sample as the garbage collector's, wherever it is
// charged: background marking, assists, sweeping.
var gcFrames = []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.sweepone", "runtime.gcDrain"}

// share is one component's part of the agent's CPU samples.
type share struct {
	Name     string
	Fraction float64 // of all samples
}

// profileShares charges each sample of a CPU profile to a component and
// returns the shares, largest first, plus the fraction of samples in the
// garbage collector wherever charged, and the CPU time the profile holds.
func profileShares(p *profile.Profile) ([]share, float64, time.Duration) {
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			vi = i
		}
	}
	if vi < 0 {
		vi = len(p.SampleType) - 1
	}
	by := map[string]int64{}
	var total, gc int64
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		charged, inGC := "", false
		// Frames from root to leaf, so a caller's component wins.
		var fns []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if ln.Function != nil {
					fns = append(fns, ln.Function.Name)
				}
			}
		}
		slices.Reverse(fns)
		for _, c := range components {
			if slices.ContainsFunc(fns, c.match) {
				charged = c.name
				break
			}
		}
		if charged == "" {
			charged = otherComponent
		}
		for _, fn := range fns {
			for _, g := range gcFrames {
				if strings.HasPrefix(fn, g) {
					inGC = true
				}
			}
		}
		by[charged] += v
		if inGC {
			gc += v
		}
	}
	if total == 0 {
		return nil, 0, 0
	}
	var out []share
	for name, v := range by {
		out = append(out, share{name, float64(v) / float64(total)})
	}
	slices.SortFunc(out, func(a, b share) int {
		if a.Fraction != b.Fraction {
			if a.Fraction > b.Fraction {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, float64(gc) / float64(total), time.Duration(total)
}

// cpuCounters are cumulative CPU times: the machine's busy and total
// jiffies (/proc/stat), the agent's and this process's CPU seconds.
type cpuCounters struct {
	at                time.Time
	busy, all         float64 // machine, in clock ticks
	agent, driver     float64 // seconds
	agentErr, procErr error
}

func readCounters(pid int) cpuCounters {
	c := cpuCounters{at: time.Now()}
	c.busy, c.all, c.procErr = machineTicks()
	c.agent, c.agentErr = processCPU(pid)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		c.driver = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return c
}

// machineTicks reads the first line of /proc/stat: busy is every field but
// idle and iowait.
func machineTicks() (busy, all float64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseProcStat(string(b))
}

func parseProcStat(text string) (busy, all float64, err error) {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	for i, s := range f[1:] {
		if i >= 8 { // guest time is already in user
			break
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %q: %w", s, err)
		}
		all += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, all, nil
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// processCPU is a process's user plus system CPU seconds from
// /proc/PID/stat.
func processCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parsePidStat(string(b))
}

func parsePidStat(text string) (float64, error) {
	// The command name is in parentheses and may hold spaces: count
	// fields after its closing one. utime and stime are fields 14 and 15.
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/PID/stat: no command name")
	}
	f := strings.Fields(text[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/PID/stat: %d fields after the name", len(f))
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/PID/stat: utime %q stime %q", f[11], f[12])
	}
	return (ut + st) / clockTicks, nil
}

// cpuAccount is what one measured window used.
type cpuAccount struct {
	Wall          time.Duration
	Cores         int
	MachineBusy   float64 // fraction of all cores
	AgentCores    float64 // CPU seconds per second
	DriverCores   float64
	Jobs          int // jobs the window handled, for per-job figures
	Shares        []share
	GC            float64       // fraction of the agent's samples in the GC
	ProfileWindow time.Duration // how long the profile sampled
	Err           error         // the profile could not be taken; counters still hold
}

// profiling is a CPU account in progress: the counters read at its start
// and the agent's CPU profile being taken.
type profiling struct {
	a       *agentProc
	start   cpuCounters
	prof    chan profResult
	seconds int
}

type profResult struct {
	p   *profile.Profile
	err error
}

// startAccount reads the counters and starts a CPU profile of the agent
// for seconds (the agent's own /v1/agent/pprof/profile).
func startAccount(a *agentProc, seconds int) *profiling {
	pr := &profiling{a: a, start: readCounters(a.cmd.Process.Pid), prof: make(chan profResult, 1), seconds: seconds}
	go func() {
		resp, err := http.Get(fmt.Sprintf("%s/v1/agent/pprof/profile?seconds=%d", a.addr, seconds))
		if err != nil {
			pr.prof <- profResult{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("cpu profile: status %d: %s", resp.StatusCode, bytes.TrimSpace(body))
		}
		if err != nil {
			pr.prof <- profResult{err: err}
			return
		}
		p, err := profile.Parse(bytes.NewReader(body))
		pr.prof <- profResult{p: p, err: err}
	}()
	return pr
}

// finish reads the counters again (the window ends now) and waits for
// the profile.
func (pr *profiling) finish(jobs int) cpuAccount {
	end := readCounters(pr.a.cmd.Process.Pid)
	acc := cpuAccount{Wall: end.at.Sub(pr.start.at), Cores: cores(), Jobs: jobs}
	secs := acc.Wall.Seconds()
	if d := end.all - pr.start.all; d > 0 {
		acc.MachineBusy = (end.busy - pr.start.busy) / d
	}
	if secs > 0 {
		acc.AgentCores = (end.agent - pr.start.agent) / secs
		acc.DriverCores = (end.driver - pr.start.driver) / secs
	}
	if err := firstErr(pr.start.agentErr, end.agentErr, pr.start.procErr, end.procErr); err != nil {
		acc.Err = err
	}
	res := <-pr.prof
	if res.err != nil {
		acc.Err = res.err
		return acc
	}
	acc.Shares, acc.GC, _ = profileShares(res.p)
	acc.ProfileWindow = time.Duration(pr.seconds) * time.Second
	return acc
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func cores() int {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "cpu") && len(line) > 3 && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// markdown renders the account as a paragraph and a table for the page.
func (acc cpuAccount) markdown(what string) string {
	var b strings.Builder
	perJob := func(c float64) string {
		if acc.Jobs == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f ms", c*acc.Wall.Seconds()/float64(acc.Jobs)*1000)
	}
	fmt.Fprintf(&b, "CPU account, %s (%.1f s, %d jobs): the machine's %d cores were %.0f%% busy; the agent used %.2f cores (%s of CPU per job), the bench's own driver %.2f (%s per job).",
		what, acc.Wall.Seconds(), acc.Jobs, acc.Cores, acc.MachineBusy*100, acc.AgentCores, perJob(acc.AgentCores), acc.DriverCores, perJob(acc.DriverCores))
	if acc.Jobs > 0 && acc.AgentCores+acc.DriverCores > 0 {
		per := (acc.AgentCores + acc.DriverCores) * acc.Wall.Seconds() / float64(acc.Jobs)
		fmt.Fprintf(&b, " At that CPU per job, %d cores can handle at most %s jobs/s (a generous ceiling: work the jobs still caused after the window is not counted).", acc.Cores, num(float64(acc.Cores)/per))
	}
	if acc.Err != nil {
		fmt.Fprintf(&b, " (No profile: %v.)", acc.Err)
		return b.String()
	}
	fmt.Fprintf(&b, " Where the agent's CPU went, from its CPU profile over the first %.0f s of the window (each sample charged to the first of these parts its stack passes through, from the root; %.0f%% of all samples were in the garbage collector, wherever charged):\n\n", acc.ProfileWindow.Seconds(), acc.GC*100)
	b.WriteString("| part of the agent | share of its CPU |\n|---|---|\n")
	for _, s := range acc.Shares {
		fmt.Fprintf(&b, "| %s | %.1f%% |\n", s.Name, s.Fraction*100)
	}
	return strings.TrimRight(b.String(), "\n")
}
