package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func TestClient_RegistersFingerprintedNode(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", func(cfg *Config) {
		cfg.Meta = map[string]string{"rack": "r1"}
		cfg.NodeClass = "big"
	})
	var node *structs.Node
	must.Wait(t, waitFor(func() bool {
		n, err := srv.State().NodeByID(nil, c.NodeID())
		node = n
		return err == nil && n != nil && n.Status == structs.NodeStatusReady
	}))
	for _, k := range []string{"kernel.name", "kernel.version", "os.name", "cpu.arch", "cpu.numcores", "cpu.frequency",
		"cpu.totalcompute", "memory.totalbytes", "unique.hostname", "unique.storage.bytesfree", "nomad.version",
		"driver.raw_exec", "driver.mock_driver"} {
		must.MapContainsKey(t, node.Attributes, k)
	}
	must.Eq(t, "r1", node.Meta["rack"])
	must.Eq(t, "big", node.NodeClass)
	must.True(t, node.Drivers["raw_exec"].Healthy)
	must.StrHasPrefix(t, "v1:", node.ComputedClass)
	must.Positive(t, node.NodeResources.Cpu.CpuShares)
	must.Positive(t, node.NodeResources.Memory.MemoryMB)
}

func TestClient_RawExec_EnvExitCodeAndInterpolation(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", func(cfg *Config) { cfg.Meta = map[string]string{"zone": "z1"} })
	task := shTask("main", `env > "$NOMAD_TASK_DIR/env.txt"; echo "${attr.kernel.name} ${meta.zone}"; exit 3`)
	task.Env = map[string]string{"NODE": "${node.unique.name}", "GREETING": "hi-${NOMAD_TASK_NAME}"}
	task.Meta = map[string]string{"owner": "ops"}
	job := batchJob("env", task)
	register(t, srv, job)

	a := serverAlloc(t, srv, "env", 20*time.Second, status(structs.AllocClientStatusFailed))
	ts := a.TaskStates["main"]
	term := findEvent(ts, structs.TaskTerminated)
	must.NotNil(t, term)
	must.Eq(t, 3, term.ExitCode)
	must.Eq(t, "Exit Code: 3", term.DisplayMessage)
	nr := findEvent(ts, structs.TaskNotRestarting)
	must.NotNil(t, nr)
	must.Eq(t, "Policy allows no restarts", nr.DisplayMessage)
	must.Eq(t, []string{"Received", "Task Setup", "Started", "Terminated", "Not Restarting"}, eventTypes(ts))
	must.Eq(t, "Task received by client", ts.Events[0].DisplayMessage)
	must.Eq(t, "Building Task Directory", ts.Events[1].DisplayMessage)
	must.Eq(t, "Task started by client", ts.Events[2].DisplayMessage)
	must.True(t, ts.Failed)
	must.False(t, ts.StartedAt.IsZero())
	must.False(t, ts.FinishedAt.IsZero())

	ad := allocdir.New(c.cfg.AllocDir, a.ID)
	b, err := os.ReadFile(filepath.Join(ad.LocalDir("main"), "env.txt"))
	must.NoError(t, err)
	env := string(b)
	for _, want := range []string{
		"NOMAD_ALLOC_ID=" + a.ID,
		"NOMAD_ALLOC_NAME=env.work[0]",
		"NOMAD_ALLOC_INDEX=0",
		"NOMAD_JOB_NAME=env",
		"NOMAD_JOB_ID=env",
		"NOMAD_GROUP_NAME=work",
		"NOMAD_TASK_NAME=main",
		"NOMAD_DC=dc1",
		"NOMAD_REGION=global",
		"NOMAD_NAMESPACE=default",
		"NOMAD_ALLOC_DIR=" + ad.SharedDir(),
		"NOMAD_TASK_DIR=" + ad.LocalDir("main"),
		"NOMAD_SECRETS_DIR=" + ad.SecretsDir("main"),
		"NOMAD_META_owner=ops",
		"NOMAD_META_OWNER=ops",
		"NODE=" + c.Node().Name,
		"GREETING=hi-main",
	} {
		must.StrContains(t, env, want+"\n")
	}
	out := waitFile(t, filepath.Join(ad.LogDir(), "main.stdout.0"), func(s string) bool { return s != "" })
	must.Eq(t, "linux z1\n", out)
	for _, d := range []string{ad.LogDir(), filepath.Join(ad.SharedDir(), "data"), filepath.Join(ad.SharedDir(), "tmp"),
		ad.LocalDir("main"), ad.SecretsDir("main"), filepath.Join(ad.TaskDir("main"), "tmp")} {
		_, err := os.Stat(d)
		must.NoError(t, err)
	}
}

func TestClient_RawExec_RestartPolicyCountsExact(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", nil)
	job := batchJob("restarts", shTask("main", `echo run >> "$NOMAD_ALLOC_DIR/data/runs"; exit 1`))
	job.TaskGroups[0].RestartPolicy = &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 50 * time.Millisecond, Mode: structs.RestartPolicyModeFail}
	register(t, srv, job)

	a := serverAlloc(t, srv, "restarts", 20*time.Second, status(structs.AllocClientStatusFailed))
	ts := a.TaskStates["main"]
	must.Eq(t, uint64(2), ts.Restarts)
	must.Eq(t, []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Started", "Terminated", "Restarting", "Started", "Terminated", "Not Restarting"}[1:], eventTypes(ts))
	must.Eq(t, "Task restarting in 50ms", findEvent(ts, structs.TaskRestarting).DisplayMessage)
	must.Eq(t, `Exceeded allowed attempts 2 in interval 1m0s and mode is "fail"`, findEvent(ts, structs.TaskNotRestarting).DisplayMessage)
	runs, err := os.ReadFile(filepath.Join(allocdir.New(c.cfg.AllocDir, a.ID).SharedDir(), "data", "runs"))
	must.NoError(t, err)
	must.Eq(t, 3, strings.Count(string(runs), "run"))
}

func TestClient_RawExec_KillTimeoutEscalatesToSIGKILL(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", nil)
	r := reaper(t)
	task := shTask("main", `trap 'echo got-int' INT; echo $$ > "$NOMAD_TASK_DIR/pid"; while true; do sleep 0.05; done`)
	task.KillTimeout = 500 * time.Millisecond
	register(t, srv, batchJob("killer", task))
	a := serverAlloc(t, srv, "killer", 20*time.Second, status(structs.AllocClientStatusRunning))
	pidFile := filepath.Join(allocdir.New(c.cfg.AllocDir, a.ID).LocalDir("main"), "pid")
	pid, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, pidFile, func(s string) bool { return strings.HasSuffix(s, "\n") })))
	r.add(pid)

	start := time.Now()
	deregister(t, srv, "killer")
	a = serverAlloc(t, srv, "killer", 20*time.Second, status(structs.AllocClientStatusComplete))
	must.Greater(t, 400*time.Millisecond, time.Since(start))
	ts := a.TaskStates["main"]
	must.Eq(t, "Sent interrupt. Waiting 500ms before force killing", findEvent(ts, structs.TaskKilling).DisplayMessage)
	term := findEvent(ts, structs.TaskTerminated)
	must.Eq(t, int(syscall.SIGKILL), term.Signal)
	must.Eq(t, "Exit Code: 137, Signal: 9", term.DisplayMessage)
	must.Eq(t, "Task successfully killed", findEvent(ts, structs.TaskKilled).DisplayMessage)
	must.False(t, ts.Failed)
	must.Error(t, syscall.Kill(pid, 0)) // the process is gone
	out := waitFile(t, filepath.Join(allocdir.New(c.cfg.AllocDir, a.ID).LogDir(), "main.stdout.0"), func(s string) bool { return true })
	must.StrContains(t, out, "got-int")
}

func TestClient_Lifecycle_PrestartMainPoststopAndSidecar(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", nil)
	log := `"$NOMAD_ALLOC_DIR/data/order"`
	pre := shTask("pre", `sleep 0.2; echo pre >> `+log)
	pre.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
	side := shTask("side", `echo side-up >> `+log+`; while true; do sleep 0.05; done`)
	side.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}
	side.KillTimeout = 200 * time.Millisecond
	main := shTask("main", `grep -q pre `+log+` && echo main >> `+log)
	post := shTask("post", `echo post >> `+log)
	post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
	register(t, srv, batchJob("lifecycle", pre, side, main, post))

	a := serverAlloc(t, srv, "lifecycle", 20*time.Second, status(structs.AllocClientStatusComplete))
	b, err := os.ReadFile(filepath.Join(allocdir.New(c.cfg.AllocDir, a.ID).SharedDir(), "data", "order"))
	must.NoError(t, err)
	lines := strings.Fields(string(b))
	must.Eq(t, 4, len(lines), must.Sprint(string(b)))
	must.SliceContainsAll(t, lines[:2], []string{"pre", "side-up"})
	must.Eq(t, []string{"main", "post"}, lines[2:])
	must.NotNil(t, findEvent(a.TaskStates["side"], structs.TaskMainDead))
	for name, ts := range a.TaskStates {
		must.Eq(t, structs.TaskStateDead, ts.State, must.Sprint(name))
		must.False(t, ts.Failed, must.Sprint(name))
	}
	must.True(t, a.TaskStates["main"].StartedAt.After(a.TaskStates["pre"].FinishedAt) || a.TaskStates["main"].StartedAt.Equal(a.TaskStates["pre"].FinishedAt))
	must.True(t, a.TaskStates["post"].StartedAt.After(a.TaskStates["main"].FinishedAt))
}

func TestClient_BadInput_FailsTaskWithEvent(t *testing.T) {
	srv := testServer(t)
	testClient(t, srv, "", nil)
	cases := []struct {
		name, evType, contains string
		task                   *structs.Task
	}{
		{"nocmd", structs.TaskFailedValidation, `missing required config key "command"`,
			&structs.Task{Name: "main", Driver: "raw_exec", Config: map[string]any{"args": []any{"x"}}, Resources: &structs.Resources{CPU: 10, MemoryMB: 10}}},
		{"badkey", structs.TaskFailedValidation, `unsupported config key "colour"`,
			&structs.Task{Name: "main", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true", "colour": "red"}, Resources: &structs.Resources{CPU: 10, MemoryMB: 10}}},
		{"mockkey", structs.TaskFailedValidation, `unsupported config key "run_forever"`,
			mockTask("main", map[string]any{"run_forever": true})},
		{"nobinary", structs.TaskDriverFailure, "/no/such/binary",
			&structs.Task{Name: "main", Driver: "raw_exec", Config: map[string]any{"command": "/no/such/binary"}, Resources: &structs.Resources{CPU: 10, MemoryMB: 10}}},
		{"starterr", structs.TaskDriverFailure, "boom at start",
			mockTask("main", map[string]any{"start_error": "boom at start"})},
	}
	for _, tc := range cases {
		register(t, srv, batchJob(tc.name, tc.task))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := serverAlloc(t, srv, tc.name, 20*time.Second, status(structs.AllocClientStatusFailed))
			ts := a.TaskStates["main"]
			e := findEvent(ts, tc.evType)
			must.NotNil(t, e, must.Sprint(describeTasks(a.TaskStates)))
			must.StrContains(t, e.DisplayMessage, tc.contains)
			must.Eq(t, structs.TaskStateDead, ts.State)
			must.True(t, ts.Failed)
			must.Nil(t, findEvent(ts, structs.TaskStarted))
		})
	}
}

func TestClient_RestartReattachesToRunningTask(t *testing.T) {
	srv := testServer(t)
	dataDir := t.TempDir()
	r := reaper(t)
	c1 := testClient(t, srv, dataDir, nil)
	script := `echo $$ >> "$NOMAD_TASK_DIR/pids"; while [ ! -f "$NOMAD_TASK_DIR/go" ]; do sleep 0.05; done; echo done; exit 0`
	register(t, srv, batchJob("long", shTask("main", script)))
	a := serverAlloc(t, srv, "long", 20*time.Second, status(structs.AllocClientStatusRunning))
	local := allocdir.New(c1.cfg.AllocDir, a.ID).LocalDir("main")
	pid, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(local, "pids"), func(s string) bool { return strings.HasSuffix(s, "\n") })))
	r.add(pid)

	c1.crash()
	must.NoError(t, syscall.Kill(pid, 0)) // still running without a client

	c2 := testClient(t, srv, dataDir, nil)
	must.Eq(t, c1.NodeID(), c2.NodeID())
	ar, err := c2.AllocRunner(a.ID)
	must.NoError(t, err)
	st, _ := ar.ClientStatus()
	must.Eq(t, structs.AllocClientStatusRunning, st)
	// Measured from the re-attached process, once the new runner has
	// recovered its handle (it does so in the background).
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		usage, err := c2.AllocStats(a.ID)
		if err != nil {
			return err
		}
		if usage.ResourceUsage.MemoryStats.RSS == 0 {
			return fmt.Errorf("no RSS measured yet")
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	must.NoError(t, os.WriteFile(filepath.Join(local, "go"), nil, 0o644))
	a = serverAlloc(t, srv, "long", 20*time.Second, status(structs.AllocClientStatusComplete))
	ts := a.TaskStates["main"]
	pids, err := os.ReadFile(filepath.Join(local, "pids"))
	must.NoError(t, err)
	must.Eq(t, strconv.Itoa(pid)+"\n", string(pids)) // never started twice
	must.Eq(t, 1, strings.Count(strings.Join(eventTypes(ts), ","), "Started"))
	must.Eq(t, "Exit Code: 0", findEvent(ts, structs.TaskTerminated).DisplayMessage)
	must.Eq(t, uint64(0), ts.Restarts)

	rd, err := c2.LogReader(a.ID, "main", "stdout", "start", 0, false)
	must.NoError(t, err)
	defer rd.Close()
	b := make([]byte, 100)
	n, _ := rd.Read(b)
	must.Eq(t, "done\n", string(b[:n]))
}

func TestClient_ServerPartitionKeepsTasksAndReportsAfter(t *testing.T) {
	srv := testServer(t)
	p := &partitionRPC{inner: InProcessRPC(srv)}
	c := testClient(t, srv, "", func(cfg *Config) {
		cfg.RPC = p
		cfg.RetryInterval = 100 * time.Millisecond
	})
	register(t, srv, batchJob("short", mockTask("main", map[string]any{"run_for": "1500ms"})))
	register(t, srv, batchJob("long", mockTask("main", map[string]any{"run_for": "1h"})))
	short := serverAlloc(t, srv, "short", 20*time.Second, status(structs.AllocClientStatusRunning))
	serverAlloc(t, srv, "long", 20*time.Second, status(structs.AllocClientStatusRunning))

	p.cut.Store(true)
	ar, err := c.AllocRunner(short.ID)
	must.NoError(t, err)
	must.Wait(t, waitFor(func() bool { st, _ := ar.ClientStatus(); return st == structs.AllocClientStatusComplete }))
	// The server has not heard: the client cannot reach it.
	got, err := srv.State().AllocByID(nil, short.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocClientStatusRunning, got.ClientStatus)

	p.cut.Store(false)
	a := serverAlloc(t, srv, "short", 20*time.Second, status(structs.AllocClientStatusComplete))
	must.Eq(t, []string{"Received", "Task Setup", "Started", "Terminated"}, eventTypes(a.TaskStates["main"]))
	serverAlloc(t, srv, "long", 5*time.Second, status(structs.AllocClientStatusRunning))
}
