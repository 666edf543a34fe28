// Command bench is what `make bench` runs: the Go benchmarks that measure
// one part alone (scheduler, plan applier, state store) and whole-system
// runs against real agents started from bin/nomad, each figure the median
// of several runs, written with the targets beside them to
// website/performance.md (plus a timeline plot of the single-node drain).
//
// A section is one function from a runner to its figures; adding a shape
// (the node-simulator sections) means adding one function to sections.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runner holds what every section needs: the agent binary, how many times
// to repeat each measurement, and where to put files the page links to.
type runner struct {
	bin     string // the nomad binary under test
	runs    int    // repetitions per figure; the page shows the median
	outDir  string // where the page and its images go
	workDir string // scratch space, removed at the end
	quick   bool   // smaller shapes, for trying the driver itself
	simFlag bool   // bin supports `agent -sim-nodes N`
}

// section is one part of the page.
type section struct {
	Title   string
	Command string   // how to reproduce it by hand
	Figures []figure // the measured figures
	Notes   []string // lines of prose under the table
	Skipped string   // why the section was not run, if it was not
	Took    time.Duration
}

func main() {
	bin := flag.String("bin", "bin/nomad", "the nomad binary to run agents from")
	out := flag.String("out", "website/performance.md", "the page to write")
	runs := flag.Int("runs", 3, "repetitions per figure (the page shows the median; at least 3 for the real page)")
	quick := flag.Bool("quick", false, "smaller shapes, to try the driver quickly; not for the real page")
	only := flag.String("only", "", "run only the sections whose key contains this (e.g. drain)")
	flag.Parse()
	if err := run(*bin, *out, *runs, *quick, *only); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bin, out string, runs int, quick bool, only string) error {
	if runs < 1 {
		return fmt.Errorf("-runs must be at least 1, not %d", runs)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("agent binary: %w (run make build first)", err)
	}
	work, err := os.MkdirTemp("", "nomadq-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	r := &runner{bin: abs, runs: runs, outDir: filepath.Dir(out), workDir: work, quick: quick}
	r.simFlag = supportsSimNodes(abs)

	started := time.Now()
	var done []section
	for _, s := range sections {
		if only != "" && !strings.Contains(s.key, only) {
			continue
		}
		logf("== %s", s.key)
		t0 := time.Now()
		sec := s.run(r)
		sec.Took = time.Since(t0)
		logf("   %s took %s", s.key, sec.Took.Round(time.Second))
		done = append(done, sec)
	}
	page := renderPage(r, done, started, time.Since(started))
	if err := os.WriteFile(out, []byte(page), 0o644); err != nil {
		return err
	}
	logf("wrote %s in %s", out, time.Since(started).Round(time.Second))
	return nil
}

// sections are run in this order; each key is what -only matches.
var sections = []struct {
	key string
	run func(*runner) section
}{
	{"scheduler", (*runner).schedulerSection},
	{"applier-state", (*runner).applierStateSection},
	{"restore", (*runner).restoreSection},
	{"http", (*runner).httpSection},
	{"lateness", (*runner).latenessSection},
	{"drain", (*runner).drainSection},
	{"c1m", (*runner).c1mSection},
	{"ramp", (*runner).rampSection},
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}
