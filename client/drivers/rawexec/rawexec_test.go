package rawexec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func TestMain(m *testing.M) {
	if executor.MaybeRun() {
		return
	}
	os.Exit(m.Run())
}

func taskConfig(t *testing.T, id string, cfg map[string]any) *drivers.TaskConfig {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	must.NoError(t, os.MkdirAll(logs, 0o755))
	return &drivers.TaskConfig{
		ID: id, AllocID: "a1", Name: "web", Config: cfg,
		Env:     map[string]string{"GREETING": "hello"},
		TaskDir: dir, LogDir: logs, MaxFiles: 2, MaxFileSizeMB: 1,
	}
}

func waitExit(t *testing.T, d drivers.Driver, id string) *drivers.ExitResult {
	t.Helper()
	ch, err := d.WaitTask(context.Background(), id)
	must.NoError(t, err)
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("task did not exit")
		return nil
	}
}

func killGroupAtCleanup(t *testing.T, h *drivers.TaskHandle) {
	var st struct{ Pid int }
	must.NoError(t, json.Unmarshal(h.State, &st))
	t.Cleanup(func() {
		_ = syscall.Kill(-st.Pid, syscall.SIGKILL)
		// A driver of its own removes the run's cgroup too.
		d := New(Options{})
		_ = d.RecoverTask(h)
		_ = d.DestroyTask(h.Config.ID)
	})
}

func TestRawExec_ExitCodeEnvAndLogs(t *testing.T) {
	d := New(Options{Enabled: true})
	tc := taskConfig(t, "t1", map[string]any{"command": "/bin/sh", "args": []any{"-c", `echo "$GREETING out"; echo err >&2; exit 3`}})
	h, err := d.StartTask(tc)
	must.NoError(t, err)
	killGroupAtCleanup(t, h)
	r := waitExit(t, d, "t1")
	must.Eq(t, 3, r.ExitCode)
	must.Eq(t, 0, r.Signal)
	out, err := os.ReadFile(filepath.Join(tc.LogDir, "web.stdout.0"))
	must.NoError(t, err)
	must.Eq(t, "hello out\n", string(out))
	errOut, err := os.ReadFile(filepath.Join(tc.LogDir, "web.stderr.0"))
	must.NoError(t, err)
	must.Eq(t, "err\n", string(errOut))
}

func TestRawExec_Validation(t *testing.T) {
	d := New(Options{Enabled: true})
	err := d.ValidateConfig(map[string]any{"args": []any{"x"}})
	must.ErrorContains(t, err, `missing required config key "command"`)
	err = d.ValidateConfig(map[string]any{"command": "/bin/true", "bogus": 1})
	must.ErrorContains(t, err, `"bogus"`)
	var ve *drivers.ValidationError
	must.ErrorAs[*drivers.ValidationError](t, err, &ve)
}

func TestRawExec_KillEscalatesToSIGKILL(t *testing.T) {
	d := New(Options{Enabled: true})
	tc := taskConfig(t, "t2", map[string]any{"command": "/bin/sh", "args": []any{"-c", `trap 'echo got-int' INT; echo ready; while true; do sleep 0.05; done`}})
	h, err := d.StartTask(tc)
	must.NoError(t, err)
	killGroupAtCleanup(t, h)
	waitForFile(t, filepath.Join(tc.LogDir, "web.stdout.0"), "ready")
	must.NoError(t, d.StopTask("t2", 300*time.Millisecond, "SIGINT"))
	r := waitExit(t, d, "t2")
	must.Eq(t, int(syscall.SIGKILL), r.Signal)
	must.Eq(t, 128+9, r.ExitCode)
}

func TestRawExec_RecoverAfterRestart(t *testing.T) {
	d := New(Options{Enabled: true})
	tc := taskConfig(t, "t3", map[string]any{"command": "/bin/sh", "args": []any{"-c", `echo $$ > pid; while [ ! -f go ]; do sleep 0.05; done; exit 7`}})
	h, err := d.StartTask(tc)
	must.NoError(t, err)
	killGroupAtCleanup(t, h)
	pidFile := filepath.Join(tc.TaskDir, "pid")
	waitForFile(t, pidFile, "")

	// A second driver, as a restarted client would have.
	d2 := New(Options{Enabled: true})
	must.NoError(t, d2.RecoverTask(h))
	var st struct{ Pid int }
	must.NoError(t, json.Unmarshal(h.State, &st))
	b, _ := os.ReadFile(pidFile)
	must.Eq(t, strconv.Itoa(st.Pid), strings.TrimSpace(string(b)))
	u, err := d2.TaskStats("t3")
	must.NoError(t, err)
	must.SliceContains(t, u.Pids, st.Pid)
	must.Positive(t, u.RSS)

	must.NoError(t, os.WriteFile(filepath.Join(tc.TaskDir, "go"), nil, 0o644))
	r := waitExit(t, d2, "t3")
	must.Eq(t, 7, r.ExitCode)

	// After the waiter is gone, recovery reads the recorded exit.
	d3 := New(Options{Enabled: true})
	must.NoError(t, d3.RecoverTask(h))
	must.Eq(t, 7, waitExit(t, d3, "t3").ExitCode)
}

func TestRawExec_Rotation(t *testing.T) {
	d := New(Options{Enabled: true})
	tc := taskConfig(t, "t4", map[string]any{"command": "/bin/sh", "args": []any{"-c",
		`head -c 1200000 /dev/zero | tr '\0' a; sleep 1.5; echo tail`}})
	h, err := d.StartTask(tc)
	must.NoError(t, err)
	killGroupAtCleanup(t, h)
	must.Eq(t, 0, waitExit(t, d, "t4").ExitCode)
	b0, err := os.ReadFile(filepath.Join(tc.LogDir, "web.stdout.0"))
	must.NoError(t, err)
	b1, err := os.ReadFile(filepath.Join(tc.LogDir, "web.stdout.1"))
	must.NoError(t, err)
	must.Eq(t, 1200000, len(b0))
	must.Eq(t, "tail\n", string(b1))
}

func waitForFile(t *testing.T, path, contains string) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), contains) {
			return fmt.Errorf("%s holds %q, waiting for %q", path, b, contains)
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
}

// A raw_exec task runs in a cgroup where the client can use cgroups: a
// daemon it forks into a session of its own, out of its process group,
// still dies with it.
func TestRawExec_DaemonDiesWithTask(t *testing.T) {
	d := New(Options{Enabled: true})
	if !d.cgroups {
		t.Skip("raw_exec kills daemons only with cgroups: needs root and cgroups")
	}
	tc := taskConfig(t, "t5", map[string]any{"command": "/bin/sh", "args": []any{"-c", `setsid sleep 300 >/dev/null 2>&1 & echo $! > daemon; exit 0`}})
	h, err := d.StartTask(tc)
	must.NoError(t, err)
	killGroupAtCleanup(t, h)
	must.Eq(t, 0, waitExit(t, d, "t5").ExitCode)
	waitForFile(t, filepath.Join(tc.TaskDir, "daemon"), "\n")
	b, _ := os.ReadFile(filepath.Join(tc.TaskDir, "daemon"))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	must.NoError(t, syscall.Kill(pid, 0)) // the daemon outlived its task

	must.NoError(t, d.DestroyTask("t5"))
	// A killed process lingers as a zombie until its parent (init) reaps
	// it; kill(0) fails only then.
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return nil
		}
		return fmt.Errorf("daemon %d still runs: %s", pid, st)
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
}
