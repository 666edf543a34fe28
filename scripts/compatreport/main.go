// Command compatreport summarises a run of the official api module's test
// suite against our agent (see scripts/compat.sh): pass and fail per test
// family, the server-backed tests that pass against real Nomad compared
// with us, and regressions against the list of tests that passed before.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
)

// event is one line of `go test -json`.
type event struct {
	Action string
	Test   string
	Output string
}

// result is the outcome of one top-level test in one run.
type result struct {
	action string // pass, fail or skip; "" when the test never ended
	output strings.Builder
}

func main() {
	probe := flag.String("probe", "", "go test -json output of the run with no agent reachable")
	real := flag.String("real", "", "go test -json output of the run against the agent")
	nomadList := flag.String("nomad", "", "file listing the server-backed tests that pass against real Nomad")
	nomadqList := flag.String("nomadq", "", "file listing the tests that passed against nomadq before")
	write := flag.String("write", "", "write the server-backed tests that passed in this run to this file")
	verbose := flag.Bool("v", false, "list every failing server-backed test")
	flag.Parse()
	if err := run(*probe, *real, *nomadList, *nomadqList, *write, *verbose, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compatreport:", err)
		os.Exit(1)
	}
}

func run(probePath, realPath, nomadPath, nomadqPath, writePath string, verbose bool, out io.Writer) error {
	probe, err := readRun(probePath)
	if err != nil {
		return err
	}
	real, err := readRun(realPath)
	if err != nil {
		return err
	}
	if len(real) == 0 {
		return fmt.Errorf("%s holds no test results: the suite did not build or run", realPath)
	}
	nomadPass, err := readList(nomadPath)
	if err != nil {
		return err
	}
	nomadqPass, err := readList(nomadqPath)
	if err != nil {
		return err
	}

	// A test is server-backed when it skipped in the probe because the
	// harness found no nomad binary.
	serverBacked := map[string]bool{}
	for name, r := range probe {
		if r.action == "skip" && strings.Contains(r.output.String(), "nomad not found") {
			serverBacked[name] = true
		}
	}

	type tally struct{ total, pass, fail, skip, nomad, both, unitPass, unitFail int }
	families := map[string]*tally{}
	var passed, failing []string
	for name, r := range real {
		fam := family(name)
		t := families[fam]
		if t == nil {
			t = &tally{}
			families[fam] = t
		}
		if !serverBacked[name] {
			switch r.action {
			case "pass":
				t.unitPass++
			case "fail", "":
				t.unitFail++
			}
			continue
		}
		t.total++
		switch r.action {
		case "pass":
			t.pass++
			passed = append(passed, name)
		case "skip":
			t.skip++
		default:
			t.fail++
			failing = append(failing, name)
		}
		if nomadPass[name] {
			t.nomad++
			if r.action == "pass" {
				t.both++
			}
		}
	}

	names := make([]string, 0, len(families))
	for f := range families {
		names = append(names, f)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAMILY\tSERVER TESTS\tPASS\tFAIL\tSKIP\tPASS ON NOMAD\tPASS ON BOTH\tUNIT PASS\tUNIT FAIL")
	var sum tally
	for _, f := range names {
		t := families[f]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", f, t.total, t.pass, t.fail, t.skip, t.nomad, t.both, t.unitPass, t.unitFail)
		sum.total += t.total
		sum.pass += t.pass
		sum.fail += t.fail
		sum.skip += t.skip
		sum.nomad += t.nomad
		sum.both += t.both
		sum.unitPass += t.unitPass
		sum.unitFail += t.unitFail
	}
	fmt.Fprintf(tw, "TOTAL\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", sum.total, sum.pass, sum.fail, sum.skip, sum.nomad, sum.both, sum.unitPass, sum.unitFail)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nserver-backed tests passing: %d of %d", sum.pass, sum.total)
	if len(nomadPass) > 0 {
		fmt.Fprintf(out, "; of the %d that pass against real Nomad, %d pass here", len(nomadPass), sum.both)
	}
	fmt.Fprintln(out)

	if verbose {
		sort.Strings(failing)
		for _, name := range failing {
			fmt.Fprintf(out, "FAIL %s\n", name)
		}
	}

	if writePath != "" {
		sort.Strings(passed)
		body := "# Server-backed tests of github.com/hashicorp/nomad/api that passed in the run\n# that wrote this file (scripts/compat.sh with COMPAT_WRITE). One name a line.\n" + strings.Join(passed, "\n") + "\n"
		if err := os.WriteFile(writePath, []byte(body), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %d names to %s\n", len(passed), writePath)
		return nil
	}

	var regressions []string
	for name := range nomadqPass {
		if r, ok := real[name]; !ok || r.action != "pass" {
			regressions = append(regressions, name)
		}
	}
	if len(regressions) > 0 {
		sort.Strings(regressions)
		for _, name := range regressions {
			fmt.Fprintf(out, "REGRESSION %s passed before and does not now\n", name)
			if r, ok := real[name]; ok {
				fmt.Fprint(out, indent(lastLines(r.output.String(), 15)))
			}
		}
		return fmt.Errorf("%d tests that passed before fail now", len(regressions))
	}
	return nil
}

// readRun collects the outcome of each top-level test in a go test -json
// stream; lines that are not JSON (build errors) are kept out.
func readRun(path string) (map[string]*result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	results := map[string]*result{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
			continue
		}
		top, _, _ := strings.Cut(e.Test, "/")
		r := results[top]
		if r == nil {
			r = &result{}
			results[top] = r
		}
		switch {
		case e.Action == "output":
			r.output.WriteString(e.Output)
		case e.Test == top && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			r.action = e.Action
		}
	}
	return results, sc.Err()
}

// readList reads a file of test names, one a line, # for comments. A
// missing file is an empty list.
func readList(path string) (map[string]bool, error) {
	names := map[string]bool{}
	if path == "" {
		return names, nil
	}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return names, nil
	}
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			names[line] = true
		}
	}
	return names, nil
}

// family names a test's group: TestJobs_Register -> Jobs, TestRegionsList
// -> RegionsList.
func family(test string) string {
	name := strings.TrimPrefix(test, "Test")
	if i := strings.Index(name, "_"); i > 0 {
		return name[:i]
	}
	return name
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
