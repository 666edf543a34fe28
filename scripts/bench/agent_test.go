package main

import (
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// The tail of a debug=1 heap profile, as the runtime writes it.
const memStatsTail = `heap profile: 3: 1024 [9: 4096] @ heap/1048576
# runtime.MemStats
# Alloc = 10017984
# TotalAlloc = 1234567890
# Sys = 113727784
# HeapAlloc = 10017984
# HeapSys = 100859904
# HeapInuse = 18587648
# Stack = 2457600 / 2457600
# MSpan = 297760 / 1713600
`

func TestParseMemStats(t *testing.T) {
	mem, err := parseMemStats(memStatsTail)
	must.NoError(t, err)
	must.Eq(t, goMem{HeapAlloc: 10017984, StackInuse: 2457600}, mem)
	_, err = parseMemStats(strings.ReplaceAll(memStatsTail, "# Stack", "# Stuck"))
	must.ErrorContains(t, err, "no HeapAlloc or Stack")
}

func TestParseClientAllocs(t *testing.T) {
	raw := []byte(`{"Gauges":[
		{"Name":"nomad.client.allocations.pending","Value":1,"Labels":{"node_id":"n"}},
		{"Name":"nomad.client.allocations.running","Value":2},
		{"Name":"nomad.client.allocations.terminal","Value":30},
		{"Name":"nomad.broker.total_ready","Value":400}]}`)
	n, err := parseClientAllocs(raw)
	if err != nil || n != 33 {
		t.Fatalf("got %d, %v; want 33 (pending + running + terminal)", n, err)
	}
	if _, err := parseClientAllocs([]byte(`{"Gauges":[{"Name":"nomad.broker.total_ready","Value":1}]}`)); err == nil {
		t.Error("no error for an agent without client gauges")
	}
}

func TestParseGCTrace(t *testing.T) {
	log := `2026-12-06T04:37:20.1Z [INFO]  agent: started
gc 46 @15.185s 15%: 0.18+447+0.097 ms clock, 0.36+120/300/50+0.19 ms cpu, 414->491->282 MB, 486 MB goal, 0 MB stacks, 0 MB globals, 2 P
gc 47 @27.374s 9%: 0.35+1004+0.13 ms clock, 0.70+123/393/68+0.26 ms cpu, 482->570->290 MB, 566 MB goal, 0 MB stacks, 0 MB globals, 2 P
gc 48 @29.245s 9%: 0.13+873+0.089 ms clock, 0.26+100/400/60+0.17 ms cpu, 494->592->323 MB, 580 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)
gc 49 @40.000s 9%: 0.13+100+0.089 ms clock, 0.26+1/2/3+0.17 ms cpu, 300->310->250 MB, 580 MB goal, 0 MB stacks, 0 MB globals, 2 P
not a gc line: gc 50 @x
`
	cycles := parseGCTrace(log)
	must.SliceLen(t, 4, cycles)
	must.Eq(t, gcCycle{At: 27374 * time.Millisecond, Mark: 1004 * time.Millisecond, LiveMB: 290}, cycles[1])
	w := gcDuring(cycles, 26*time.Second, 31*time.Second)
	must.Eq(t, 2, w.Cycles)
	must.Eq(t, 1004*time.Millisecond, w.LongestMark)
	must.Eq(t, 1877*time.Millisecond, w.MarkTotal)
	must.Eq(t, 323.0, w.LiveMB)
	must.Eq(t, 282.0, w.StartedWithHeap)
	must.StrContains(t, w.String(), "2 collections in 5s, marking 1.88s of it (longest mark 1s), live heap 282 MB before and up to 323 MB")
	must.StrContains(t, gcDuring(cycles, 31*time.Second, 35*time.Second).String(), "no collection in 4s (live heap 323 MB before)")
}

// procStatusText is the head of a real /proc/PID/status (kernel 6.x).
const procStatusText = `Name:	nomad
Umask:	0022
State:	S (sleeping)
VmPeak:	 2497960 kB
VmSize:	 2497960 kB
VmHWM:	  108708 kB
VmRSS:	   54176 kB
RssAnon:	   25504 kB
RssFile:	   28672 kB
RssShmem:	       0 kB
VmData:	  289336 kB
Threads:	23
SigQ:	0/95654
`

func TestParseProcStatus(t *testing.T) {
	st, err := parseProcStatus(procStatusText)
	must.NoError(t, err)
	must.Eq(t, procStatus{VmRSS: 54176 * 1024, RssAnon: 25504 * 1024, RssFile: 28672 * 1024, Threads: 23}, st)

	// An older kernel has no RssAnon or RssFile: VmRSS alone is enough.
	st, err = parseProcStatus("VmRSS:\t 1000 kB\nThreads:\t4\n")
	must.NoError(t, err)
	must.Eq(t, procStatus{VmRSS: 1000 * 1024, Threads: 4}, st)

	_, err = parseProcStatus(strings.ReplaceAll(procStatusText, "VmRSS:", "VmRSZ:"))
	must.ErrorContains(t, err, "no VmRSS")
}
