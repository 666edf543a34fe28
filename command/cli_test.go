package command

import (
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/client/drivers/executor"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<UUID>"},
	{regexp.MustCompile(`\b[0-9a-f]{8}\b`), "<ID>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<TIME>"},
	{regexp.MustCompile(`\b\d+(s|m\d+s|h\d+m|d\d+h) ago`), "<AGO>"},
	{regexp.MustCompile(`\bin (\d+h)?(\d+m)?\d+s\b`), "<IN>"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:<PORT>"},
	{regexp.MustCompile(`-check-index \d+`), "-check-index <N>"},
	{regexp.MustCompile(`Job Modify Index: \d+`), "Job Modify Index: <N>"},
	{regexp.MustCompile(`local-agent-\d+`), "<NODE>"},
	{regexp.MustCompile(`(?m)(127\.0\.0\.1 +)\d+`), "${1}<PORT>"},
	{regexp.MustCompile(`  +`), "  "},
	// Whether the monitor's first poll sees the eval pending is a race.
	{regexp.MustCompile(`(?m)^  <TIME>: Evaluation status changed: .*\n`), ""},
}

// normalize replaces what changes from run to run (IDs, times, ports) and
// collapses column padding, so golden files compare layout and content.
func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	got = normalize(got)
	if *update {
		must.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	must.NoError(t, err, must.Sprint("missing golden file; run go test ./command -run TestCLI -update"))
	must.Eq(t, string(want), got)
}

// cli runs a command against the agent at addr.
func cli(t *testing.T, addr string, args ...string) (int, string, string) {
	t.Helper()
	full := append([]string{}, args...)
	// -address goes after the command path (one, two or three words).
	n := 1
	for n < len(full) && !strings.HasPrefix(full[n], "-") && isCommandPath(strings.Join(full[:n+1], " ")) {
		n++
	}
	full = append(full[:n], append([]string{"-address", addr}, full[n:]...)...)
	return run(t, "", full...)
}

func isCommandPath(p string) bool {
	if _, ok := commands[p]; ok {
		return true
	}
	return hasSubcommands(p)
}

// waitJobDead waits until the job's status is dead; when it never is, the
// failure logs where the job was left.
func waitJobDead(t *testing.T, addr, job string) {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		j, _, err := c.Jobs().Info(job, nil)
		if err != nil {
			return err
		}
		if *j.Status != "dead" {
			return fmt.Errorf("job %s is %s", job, *j.Status)
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)), must.Func(func() string {
		dumpJob(t, c, job)
		return "job " + job + " never became dead"
	}))
}

// dumpJob logs what a job that did not finish was left with: its status,
// summary, evals and every alloc that is not complete, so a failure says
// where the pipeline stopped.
func dumpJob(t *testing.T, c *api.Client, job string) {
	t.Helper()
	if j, _, err := c.Jobs().Info(job, nil); err == nil {
		t.Logf("job %s: status %s, version %d, modify index %d", job, *j.Status, *j.Version, *j.JobModifyIndex)
	} else {
		t.Logf("job %s: %v", job, err)
	}
	if s, _, err := c.Jobs().Summary(job, nil); err == nil {
		for g, ts := range s.Summary {
			t.Logf("summary %s: queued %d starting %d running %d complete %d failed %d lost %d", g, ts.Queued, ts.Starting, ts.Running, ts.Complete, ts.Failed, ts.Lost)
		}
	}
	if evals, _, err := c.Jobs().Evaluations(job, nil); err == nil {
		for _, e := range evals {
			t.Logf("eval %s: %s %s by %s, blocked %q, failed TG allocs %d, queued %v, modify %d", e.ID[:8], e.Type, e.Status, e.TriggeredBy, e.BlockedEval, len(e.FailedTGAllocs), e.QueuedAllocations, e.ModifyIndex)
		}
	}
	allocs, _, err := c.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Logf("allocs: %v", err)
		return
	}
	counts := map[string]int{}
	for _, a := range allocs {
		counts[a.DesiredStatus+"/"+a.ClientStatus]++
		if a.ClientStatus != "complete" {
			t.Logf("alloc %s on %s: desired %s, client %s (%s), create %d modify %d", a.ID[:8], a.NodeID[:8], a.DesiredStatus, a.ClientStatus, a.ClientDescription, a.CreateIndex, a.ModifyIndex)
		}
	}
	t.Logf("allocs by desired/client status: %v", counts)
}

func TestCLI(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "job", "run", "testdata/mock.nomad.hcl")
	must.Eq(t, 0, code, must.Sprint(errOut))
	golden(t, "job_run", out)
	waitJobDead(t, addr, "mock")

	t.Run("job status list", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "status")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "job_status_list", out)
	})
	t.Run("job status", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "status", "mock")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "job_status", out)
	})
	t.Run("job status json and template", func(t *testing.T) {
		code, out, _ := cli(t, addr, "job", "status", "-t", "{{.ID}} {{.Type}} {{len .TaskGroups}}", "mock")
		must.Eq(t, 0, code)
		must.Eq(t, "mock batch 1\n", out)
		code, out, _ = cli(t, addr, "job", "status", "-json", "mock")
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"MaxRunDuration": 30000000000`)
	})
	t.Run("status by prefix dispatches to job status", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "status", "mock")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "job_status", out)
	})
	t.Run("job inspect", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "inspect", "-t", "{{.Name}} {{.Priority}}", "mock")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "mock 50\n", out)
		code, out, _ = cli(t, addr, "job", "inspect", "mock")
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"Job": {`)
	})
	t.Run("job plan shows max_run_duration", func(t *testing.T) {
		// The completed batch alloc is left alone: nothing to create or
		// destroy, so exit 0.
		code, out, errOut := cli(t, addr, "job", "plan", "testdata/mock_changed.nomad.hcl")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "job_plan", out)
	})

	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	allocs, _, err := c.Jobs().Allocations("mock", true, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	allocID := allocs[0].ID

	t.Run("alloc status", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "alloc", "status", allocID[:8])
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "", errOut)
		golden(t, "alloc_status", out)
		code, out, _ = cli(t, addr, "alloc", "status", "-t", "{{.ClientStatus}}", allocID)
		must.Eq(t, 0, code)
		must.Eq(t, "complete\n", out)
		code, out, _ = cli(t, addr, "alloc", "status", "-verbose", allocID)
		must.Eq(t, 0, code)
		must.StrContains(t, out, "Placement Metrics")
		must.StrContains(t, out, allocID)
	})
	t.Run("eval status and list", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "eval", "status", allocs[0].EvalID)
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "eval_status", out)
		code, out, errOut = cli(t, addr, "eval", "list")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "eval_list", out)
		// -job, -status and -filter all reach the server and combine.
		for _, args := range [][]string{
			{"-job", "mock", "-filter", `TriggeredBy == "job-register"`},
			{"-job", "mock", "-status", "complete"},
		} {
			code, out, errOut = cli(t, addr, append([]string{"eval", "list"}, args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			golden(t, "eval_list", out)
		}
		for _, args := range [][]string{
			{"-job", "mock", "-filter", `TriggeredBy == "node-update"`},
			{"-job", "other"},
			{"-status", "pending"},
		} {
			code, out, errOut = cli(t, addr, append([]string{"eval", "list"}, args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, "No evals found\n", out, must.Sprint(args))
		}
		code, _, errOut = cli(t, addr, "eval", "list", "-filter", `Nope == "x"`)
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `Invalid filter expression`)
		must.StrContains(t, errOut, `"Nope"`)
		code, out, _ = cli(t, addr, "eval", "status", "-json", allocs[0].EvalID)
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"TriggeredBy": "job-register"`)
	})
	t.Run("node status", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "node", "status")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "node_status_list", out)
		code, out, errOut = cli(t, addr, "node", "status", "-self")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "", errOut)
		// exec is detected only where the agent may isolate tasks.
		wantDrivers := "mock_driver,raw_exec"
		if executor.CgroupsUsable() == nil {
			wantDrivers = "exec,mock_driver,raw_exec"
		}
		must.StrContains(t, out, "Driver Status   = "+wantDrivers)
		must.StrContains(t, out, "Allocated Resources")
		code, out, _ = cli(t, addr, "node", "status", "-t", "{{.Status}}", a.Client().NodeID()[:6])
		must.Eq(t, 0, code)
		must.Eq(t, "ready\n", out)
	})
	t.Run("server members and agent-info", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "server", "members")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "server_members", out)
		code, out, errOut = cli(t, addr, "agent-info")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "nomad\n")
		must.StrContains(t, out, "  leader = true\n")
		must.StrContains(t, out, "  node_id = "+a.Client().NodeID())
	})
	t.Run("operator scheduler config", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "operator", "scheduler", "get-config")
		must.Eq(t, 0, code, must.Sprint(errOut))
		golden(t, "scheduler_get_config", out)
		code, out, errOut = cli(t, addr, "operator", "scheduler", "set-config",
			"-batch-queue-enabled=true", "-batch-queue-order", "priority",
			"-batch-queue-concurrent-placements", "3", "-batch-queue-workload-timeout", "90s",
			"-scheduler-algorithm", "spread")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "Scheduler configuration updated!\n", out)
		code, out, _ = cli(t, addr, "operator", "scheduler", "get-config", "-t",
			"{{.SchedulerAlgorithm}} {{.BatchQueue.Enabled}} {{.BatchQueue.Order}} {{.BatchQueue.ConcurrentPlacements}} {{.BatchQueue.WorkloadTimeout}}")
		must.Eq(t, 0, code)
		must.Eq(t, "spread true priority 3 1m30s\n", out)
		// Each flag alone changes only its value.
		code, _, _ = cli(t, addr, "operator", "scheduler", "set-config", "-batch-queue-enabled=false")
		must.Eq(t, 0, code)
		code, out, _ = cli(t, addr, "operator", "scheduler", "get-config", "-t", "{{.BatchQueue.Enabled}} {{.BatchQueue.Order}}")
		must.Eq(t, 0, code)
		must.Eq(t, "false priority\n", out)
		// A new order brings its backfill default; the flag says otherwise.
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"-batch-queue-order", "fair"}, "fair true\n"},
			{[]string{"-batch-queue-backfill=false"}, "fair false\n"},
			{[]string{"-batch-queue-order", "fifo", "-batch-queue-backfill=true"}, "fifo true\n"},
			{[]string{"-batch-queue-order", "priority"}, "priority true\n"},
		} {
			code, _, errOut = cli(t, addr, append([]string{"operator", "scheduler", "set-config"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			code, out, _ = cli(t, addr, "operator", "scheduler", "get-config", "-t", "{{.BatchQueue.Order}} {{.BatchQueue.Backfill}}")
			must.Eq(t, 0, code)
			must.Eq(t, tc.want, out, must.Sprint(tc.args))
		}
		code, _, errOut = cli(t, addr, "operator", "scheduler", "set-config", "-batch-queue-order", "random")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "400")
		must.StrContains(t, errOut, `BatchQueue.Order "random" is not allowed`)
		code, _, errOut = cli(t, addr, "operator", "scheduler", "set-config", "-batch-queue-concurrent-placements", "0")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "must be at least 1")
	})
	t.Run("placement failure exits 2", func(t *testing.T) {
		code, out, _ := cli(t, addr, "job", "run", "testdata/unplaceable.nomad.hcl")
		must.Eq(t, 2, code)
		must.StrContains(t, out, `failed to place all allocations`)
		must.StrContains(t, out, `Dimension "memory" exhausted on 1 nodes`)
	})
	t.Run("error paths", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "job", "status", "nope")
		must.Eq(t, 1, code)
		must.Eq(t, "No job(s) with prefix or ID \"nope\" found\n", errOut)
		// "mock" and "unplaceable" do not share a prefix; make one that does.
		code, _, _ = cli(t, addr, "job", "run", "-detach", "testdata/mock.nomad.hcl")
		must.Eq(t, 0, code)
		_, out, _ := cli(t, addr, "job", "run", "-output", "testdata/mock.nomad.hcl")
		must.StrContains(t, out, `"ID": "mock"`)
		code, _, errOut = cli(t, addr, "job", "status", "m")
		must.Eq(t, 0, code, must.Sprint(errOut)) // one job starts with "m"
		code, _, errOut = cli(t, addr, "job", "status", "u")
		must.Eq(t, 0, code, must.Sprint(errOut))
		code, _, errOut = cli(t, addr, "alloc", "status", "ffffffff")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `No allocation(s) with prefix or id "ffffffff" found`)
		code, _, errOut = cli(t, addr, "eval", "status", "ffffffff")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `No evaluation(s) with prefix or id "ffffffff" found`)
		code, _, errOut = cli(t, addr, "node", "status", "ffffffff")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `No node(s) with prefix "ffffffff" found`)
		code, _, errOut = cli(t, addr, "status", "zzz-nothing")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `No matches found for identifier "zzz-nothing"`)
		code, _, errOut = cli(t, addr, "job", "stop", "nope")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, `No job(s) with prefix or ID "nope" found`)
	})
	t.Run("ambiguous prefix", func(t *testing.T) {
		job := "testdata/mock.nomad.hcl"
		dir := t.TempDir()
		for _, id := range []string{"amb-one", "amb-two"} {
			src, err := os.ReadFile(job)
			must.NoError(t, err)
			p := filepath.Join(dir, id+".hcl")
			must.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(src), `job "mock"`, `job "`+id+`"`, 1)), 0o644))
			code, _, errOut := cli(t, addr, "job", "run", "-detach", p)
			must.Eq(t, 0, code, must.Sprint(errOut))
		}
		code, _, errOut := cli(t, addr, "job", "status", "amb")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Prefix matched multiple jobs\n\nID       Type   Priority  Status")
		must.StrContains(t, errOut, "\namb-one  batch  50")
		must.StrContains(t, errOut, "\namb-two  batch  50")
	})
	t.Run("job stop and purge", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "stop", "-yes", "mock")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "finished with status \"complete\"")
		code, out, _ = cli(t, addr, "job", "status", "-t", "{{.Stop}}", "mock")
		must.Eq(t, 0, code)
		must.Eq(t, "true\n", out)
		code, _, errOut = cli(t, addr, "job", "stop", "-purge", "-detach", "mock")
		must.Eq(t, 0, code, must.Sprint(errOut))
		code, _, _ = cli(t, addr, "job", "status", "mock")
		must.Eq(t, 1, code)
	})
}

func TestCLINoServerReachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	addr := "http://" + l.Addr().String()
	must.NoError(t, l.Close())
	for _, args := range [][]string{
		{"job", "status"}, {"job", "status", "x"}, {"alloc", "status", "abcd"}, {"eval", "list"},
		{"node", "status"}, {"server", "members"}, {"status", "x"}, {"operator", "scheduler", "get-config"},
		{"agent-info"}, {"job", "stop", "x"}, {"eval", "status", "abcd"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, addr, args...)
			must.Eq(t, 1, code)
			must.Eq(t, "", out)
			must.StrContains(t, errOut, "connection refused")
		})
	}
}
