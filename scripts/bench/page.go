package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// machineFacts describes the machine the figures come from.
func machineFacts() []string {
	read := func(path string) string { b, _ := os.ReadFile(path); return string(b) }
	field := func(text, key string) string {
		for _, line := range strings.Split(text, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
		return "unknown"
	}
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	load := strings.Fields(read("/proc/loadavg"))
	facts := []string{
		fmt.Sprintf("CPU: %s, %d cores seen by Go", field(read("/proc/cpuinfo"), "model name"), runtime.NumCPU()),
		"Memory: " + memTotal(field(read("/proc/meminfo"), "MemTotal")),
		fmt.Sprintf("OS: %s %s, Linux %s", runtime.GOOS, runtime.GOARCH, strings.TrimSpace(read("/proc/sys/kernel/osrelease"))),
		"Go: " + runtime.Version(),
	}
	if len(commit) > 0 {
		facts = append(facts, "Commit: "+strings.TrimSpace(string(commit)))
	}
	if len(load) >= 3 {
		facts = append(facts, fmt.Sprintf("Load average when the run started: %s %s %s (the machine may be shared; figures under load are lower bounds)", load[0], load[1], load[2]))
	}
	return facts
}

// renderPage writes website/performance.md.
func renderPage(r *runner, secs []section, started time.Time, took time.Duration) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Performance\n\n")
	w("This page is written by `make bench` (the program in `scripts/bench/`); do not edit it by hand. ")
	w("Every figure is the median of %d runs unless its row says otherwise; the targets are issue 22's, for this 2-core machine.\n\n", r.runs)
	w("- Command: `make bench`")
	if r.quick {
		w(" (with `-quick`: smaller shapes, not the real page)")
	}
	w("\n- Date: %s (took %s)\n", started.UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second))
	for _, f := range machineFacts() {
		w("- %s\n", f)
	}

	w("\n## Targets\n\n| section | figure | median | target | |\n|---|---|---|---|---|\n")
	for _, s := range secs {
		if s.Skipped != "" {
			w("| %s | | not run | | see below |\n", s.Title)
			continue
		}
		for _, f := range s.Figures {
			if f.Target == nil {
				continue
			}
			w("| %s | %s | %s %s | %s | %s |\n", s.Title, f.Name, num(median(f.Runs)), f.Unit, f.Target.Text, verdict(f))
		}
	}

	for _, s := range secs {
		w("\n## %s\n\n", s.Title)
		if s.Command != "" {
			w("Run: %s\n\n", s.Command)
		}
		if s.Skipped != "" {
			w("%s\n", strings.TrimSpace(s.Skipped))
			continue
		}
		w("| figure | median | unit | runs | target | |\n|---|---|---|---|---|---|\n")
		for _, f := range s.Figures {
			t, v := "", ""
			if f.Target != nil {
				t, v = f.Target.Text, verdict(f)
			}
			w("| %s | %s | %s | %s | %s | %s |\n", f.Name, num(median(f.Runs)), f.Unit, list(f.Runs), t, v)
		}
		for _, n := range s.Notes {
			w("\n%s\n", n)
		}
		w("\n(section took %s)\n", s.Took.Round(time.Second))
	}
	return b.String()
}

func verdict(f figure) string {
	if len(f.Runs) == 0 {
		return "no value"
	}
	if f.Target.Check(median(f.Runs)) {
		return "met"
	}
	if f.Target.WhyNot != "" {
		return fmt.Sprintf("**not met** ([why](%s))", f.Target.WhyNot)
	}
	return "**not met**"
}

// memTotal turns /proc/meminfo's "24683756 kB" into GiB.
func memTotal(s string) string {
	var kb float64
	if _, err := fmt.Sscanf(s, "%f kB", &kb); err != nil {
		return s
	}
	return fmt.Sprintf("%.1f GiB", kb/(1<<20))
}
