package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// cpuProfile builds a CPU profile whose samples are stacks of function
// names (leaf first, as pprof stores them), each worth 10 ms per count.
func cpuProfile(stacks map[string]int64) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     int64(10 * time.Millisecond),
	}
	fns := map[string]*profile.Function{}
	for stack, n := range stacks {
		var locs []*profile.Location
		for _, name := range strings.Split(stack, ";") {
			fn := fns[name]
			if fn == nil {
				fn = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				fns[name] = fn
				p.Function = append(p.Function, fn)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{n, n * int64(10*time.Millisecond)}})
	}
	return p
}

func TestProfileShares_ChargesTheFirstPartFromTheRoot(t *testing.T) {
	p := cpuProfile(map[string]int64{
		// The FSM's store writes are the FSM's, though Raft called it.
		"github.com/hashicorp/go-immutable-radix/v2.(*Txn).insert;" + mod + "state.(*StateStore).UpsertJob;" + mod + "nomad.(*nomadFSM).ApplyBatch;github.com/hashicorp/raft.(*Raft).runFSM": 30,
		"syscall.Syscall;github.com/hashicorp/raft.(*Raft).leaderLoop": 10,
		// An assist inside a worker is the worker's, and in the GC.
		"runtime.gcAssistAlloc;runtime.mallocgc;" + mod + "scheduler.(*GenericScheduler).Process;" + mod + "nomad.(*worker).run": 20,
		"runtime.scanobject;runtime.gcDrain;runtime.gcBgMarkWorker":                                                              15,
		// A node's RPC into the server is the endpoint's.
		mod + "nomad.(*Node).UpdateAlloc;net/rpc.(*Server).ServeRequest;" + mod + "client.inProcessRPC.Call;" + mod + "client/sim.(*Sim).sync": 10,
		mod + "client/sim.(*Sim).startTask": 5,
		"encoding/json.Unmarshal;" + mod + "agent.(*httpHandler).jobsRequest;net/http.(*conn).serve": 5,
		"runtime.futex;runtime.findRunnable;runtime.schedule":                                        5,
	})
	shares, gc, total := profileShares(p)
	if total != time.Second {
		t.Fatalf("total CPU %s, want 1s", total)
	}
	want := map[string]float64{
		"FSM (applying Raft entries to the state store)":      0.30,
		"Raft (log store, commit, leader loop)":               0.10,
		"scheduler workers":                                   0.20,
		"garbage collector (background marking)":              0.15,
		"server RPC endpoints (from HTTP, nodes, in process)": 0.10,
		"simulated nodes":                                     0.05,
		"HTTP API (routing, JSON)":                            0.05,
		otherComponent:                                        0.05,
	}
	if len(shares) != len(want) {
		t.Fatalf("shares %v, want %d parts", shares, len(want))
	}
	for i, s := range shares {
		if math.Abs(want[s.Name]-s.Fraction) > 1e-9 {
			t.Errorf("%s: %.3f, want %.3f", s.Name, s.Fraction, want[s.Name])
		}
		if i > 0 && s.Fraction > shares[i-1].Fraction {
			t.Errorf("shares not largest first: %v", shares)
		}
	}
	if math.Abs(gc-0.35) > 1e-9 {
		t.Errorf("GC fraction %.3f, want 0.35 (background 15 + assist 20)", gc)
	}
}

func TestParseProcStat(t *testing.T) {
	busy, all, err := parseProcStat("cpu  100 5 50 800 20 3 2 0 7 0\ncpu0 1 2 3 4\n")
	if err != nil {
		t.Fatal(err)
	}
	// user nice system irq softirq steal are busy; idle and iowait not;
	// guest (already counted in user) is left out.
	if busy != 160 || all != 980 {
		t.Errorf("busy %v all %v, want 160 980", busy, all)
	}
	if _, _, err := parseProcStat("intr 1 2 3\n"); err == nil {
		t.Error("no error for a /proc/stat without its cpu line")
	}
}

func TestParsePidStat(t *testing.T) {
	// A command name with a space and a parenthesis, as Linux allows.
	line := "4242 (nomad (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 130 0 0 20 0 12 0 100 0 0"
	secs, err := parsePidStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if secs != 3.8 {
		t.Errorf("CPU %v s, want 3.8 (250 + 130 ticks)", secs)
	}
	if _, err := parsePidStat("4242 (nomad) S 1 2"); err == nil {
		t.Error("no error for a short stat line")
	}
}

func TestCPUAccountMarkdown(t *testing.T) {
	acc := cpuAccount{Wall: 2 * time.Second, Cores: 2, MachineBusy: 0.97, AgentCores: 1.5, DriverCores: 0.4, Jobs: 2000,
		Shares: []share{{"FSM (applying Raft entries to the state store)", 0.3}, {otherComponent, 0.7}}, GC: 0.16, ProfileWindow: 2 * time.Second}
	md := acc.markdown("a test")
	for _, want := range []string{"97% busy", "1.50 cores (1.50 ms of CPU per job)", "0.40 (0.40 ms per job)", "at most 1,053 jobs/s", "16% of all samples", "| FSM (applying Raft entries to the state store) | 30.0% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
