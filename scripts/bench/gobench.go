package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"

	"golang.org/x/perf/benchfmt"
)

// benchResults maps a benchmark's name (without the -GOMAXPROCS suffix)
// and a unit to one value per run.
type benchResults map[string]map[string][]float64

// get returns a benchmark's values in a unit, one per run.
func (b benchResults) get(name, unit string) []float64 { return b[name][unit] }

var procsSuffix = regexp.MustCompile(`-\d+$`)

// goBench runs `go test -bench` on one package, -count r.runs times, and
// reads its output with x/perf's benchfmt (the reader benchstat uses).
func (r *runner) goBench(pkg, pattern, benchtime string) (benchResults, string, error) {
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime,
		"-count", strconv.Itoa(r.runs), "-timeout", "30m", pkg}
	cmd := exec.Command("go", args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	shown := "`go " + join(args) + "`"
	logf("   %s", shown)
	if err := cmd.Run(); err != nil {
		return nil, shown, fmt.Errorf("%s: %w\n%s", shown, err, out.String())
	}
	res, err := parseBench(out.Bytes())
	if err != nil {
		return nil, shown, err
	}
	return res, shown, nil
}

// parseBench reads `go test -bench` output with x/perf's benchfmt.
func parseBench(out []byte) (benchResults, error) {
	res := benchResults{}
	rd := benchfmt.NewReader(bytes.NewReader(out), "bench")
	for rd.Scan() {
		rec, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		// benchfmt drops the "Benchmark" prefix; the -GOMAXPROCS suffix
		// stays.
		name := "Benchmark" + procsSuffix.ReplaceAllString(string(rec.Name.Full()), "")
		if res[name] == nil {
			res[name] = map[string][]float64{}
		}
		for _, v := range rec.Values {
			// Orig* is set only where benchfmt tidied the unit (ns/op
			// to sec/op); the page wants units as the benchmark wrote them.
			unit, val := v.OrigUnit, v.OrigValue
			if unit == "" {
				unit, val = v.Unit, v.Value
			}
			res[name][unit] = append(res[name][unit], val)
		}
	}
	return res, rd.Err()
}

func join(args []string) string {
	var b bytes.Buffer
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if regexp.MustCompile(`[\s^$|*]`).MatchString(a) {
			a = "'" + a + "'"
		}
		b.WriteString(a)
	}
	return b.String()
}

// schedulerSection is the scheduler alone: scheduler.BenchmarkPlacement.
func (r *runner) schedulerSection() section {
	sec := section{Title: "Scheduler alone"}
	res, cmd, err := r.goBench("./scheduler/", "^BenchmarkPlacement$", "1x")
	sec.Command = cmd
	if err != nil {
		sec.Skipped = err.Error()
		return sec
	}
	for _, nodes := range []int{1000, 5000} {
		for _, typ := range []string{"batch", "service"} {
			for _, spread := range []bool{false, true} {
				name := fmt.Sprintf("BenchmarkPlacement/nodes=%d/type=%s/spread=%v", nodes, typ, spread)
				f := figure{
					Name: fmt.Sprintf("10k allocs on %s nodes, %s, %s", commas(int64(nodes)), typ, map[bool]string{false: "no spread", true: "spread over 10 racks"}[spread]),
					Runs: res.get(name, "us/placement"),
					Unit: "µs/placement",
				}
				if nodes == 5000 && !spread {
					f.Target = under(100)
				}
				sec.Figures = append(sec.Figures, f)
			}
		}
	}
	sec.Notes = append(sec.Notes, "One eval places a job of count 10,000 (100 MHz, 256 MB each) on empty nodes of 4,000 MHz / 8 GiB, in the scheduler's test harness with an in-memory state; the plan is accepted without being applied, so this is the scheduler's own cost (feasibility, ranking, spread scoring).")
	return sec
}

// applierStateSection is the plan applier and the state store.
func (r *runner) applierStateSection() section {
	sec := section{Title: "Plan applier and state store"}
	applyTime := "30x"
	if r.quick {
		applyTime = "5x"
	}
	res, cmd1, err := r.goBench("./nomad/", "^BenchmarkPlanApply$", applyTime)
	if err != nil {
		sec.Skipped = err.Error()
		return sec
	}
	res2, cmd2, err := r.goBench("./state/", "^Benchmark(UpsertAllocs10k|Snapshot100kAllocs)", "1x")
	if err != nil {
		sec.Skipped = err.Error()
		return sec
	}
	sec.Command = cmd1 + " and " + cmd2
	for _, size := range []int{1, 100} {
		name := fmt.Sprintf("BenchmarkPlanApply/allocs-per-plan=%d", size)
		sec.Figures = append(sec.Figures,
			figure{Name: fmt.Sprintf("plan applier, %d alloc(s) per plan: plans", size), Runs: res.get(name, "plans/s"), Unit: "plans/s"},
			figure{Name: fmt.Sprintf("plan applier, %d alloc(s) per plan: allocs", size), Runs: res.get(name, "allocs/s"), Unit: "allocs/s"})
	}
	sec.Figures = append(sec.Figures,
		figure{Name: "state store: 10,000 allocs in one transaction", Runs: res2.get("BenchmarkUpsertAllocs10kOneTxn", "allocs/s"), Unit: "allocs/s"},
		figure{Name: "state store: 10,000 allocs one transaction each", Runs: res2.get("BenchmarkUpsertAllocs10kOneAtATime", "upserts/s"), Unit: "upserts/s"},
		figure{Name: "state store: snapshot of 100,000 allocs written", Runs: scale(res2.get("BenchmarkSnapshot100kAllocs", "ns/op"), 1e-6), Unit: "ms"},
	)
	sec.Notes = append(sec.Notes, "The applier runs in a real in-memory leader with 5,000 registered nodes: fit check against the latest state, then the Raft commit (in-memory log). The state store figures are the go-memdb store alone.")
	return sec
}

func scale(xs []float64, k float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * k
	}
	return out
}
