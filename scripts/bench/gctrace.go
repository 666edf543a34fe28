package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The sim agents of the many-small-jobs section run with GODEBUG=gctrace=1:
// the runtime then writes one line per garbage collection to the agent's
// log. A step that fails on an agent holding the jobs of the steps before
// fails during the collector's mark phases (the mark's length grows with
// the live heap, and while it runs the collector takes about three
// quarters of a core), so the page says, per run, what the collector did
// during that step.

// gcCycle is one collection from a gctrace line.
type gcCycle struct {
	At     time.Duration // since the process started
	Mark   time.Duration // the concurrent mark phase's wall time
	LiveMB float64       // the heap marked live at its end
}

// gctraceLine matches e.g. "gc 62 @89.582s 11%: 0.60+2457+0.10 ms clock,
// 1.2+131/448/67+0.20 ms cpu, 1197->1418->796 MB, 1406 MB goal, ...".
var gctraceLine = regexp.MustCompile(`^gc \d+ @([0-9.]+)s \d+%: [0-9.]+\+([0-9.]+)\+[0-9.]+ ms clock, [^,]*, [0-9]+->[0-9]+->([0-9]+) MB`)

// parseGCTrace returns the collections in a log, skipping other lines.
func parseGCTrace(log string) []gcCycle {
	var out []gcCycle
	for line := range strings.Lines(log) {
		m := gctraceLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		at, err1 := strconv.ParseFloat(m[1], 64)
		mark, err2 := strconv.ParseFloat(m[2], 64)
		live, err3 := strconv.ParseFloat(m[3], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, gcCycle{At: time.Duration(at * float64(time.Second)), Mark: time.Duration(mark * float64(time.Millisecond)), LiveMB: live})
	}
	return out
}

// gcWindow sums up the collections that started in [from, to).
type gcWindow struct {
	Cycles          int
	LongestMark     time.Duration
	MarkTotal       time.Duration
	LiveMB          float64 // the largest live heap at a cycle's end
	Window          time.Duration
	StartedWithHeap float64 // the live heap of the last cycle before the window
}

func gcDuring(cycles []gcCycle, from, to time.Duration) gcWindow {
	w := gcWindow{Window: to - from}
	for _, c := range cycles {
		if c.At < from {
			w.StartedWithHeap = c.LiveMB
			continue
		}
		if c.At >= to {
			break
		}
		w.Cycles++
		w.MarkTotal += c.Mark
		w.LongestMark = max(w.LongestMark, c.Mark)
		w.LiveMB = max(w.LiveMB, c.LiveMB)
	}
	return w
}

func (w gcWindow) String() string {
	if w.Cycles == 0 {
		return fmt.Sprintf("no collection in %s (live heap %.0f MB before)", w.Window.Round(100*time.Millisecond), w.StartedWithHeap)
	}
	return fmt.Sprintf("%d collections in %s, marking %s of it (longest mark %s), live heap %.0f MB before and up to %.0f MB",
		w.Cycles, w.Window.Round(100*time.Millisecond), w.MarkTotal.Round(10*time.Millisecond), w.LongestMark.Round(10*time.Millisecond), w.StartedWithHeap, w.LiveMB)
}

// gcLog reads the agent's log for its gctrace lines.
func (a *agentProc) gcLog() []gcCycle {
	b, err := os.ReadFile(a.logPath)
	if err != nil {
		return nil
	}
	return parseGCTrace(string(b))
}
