package exec

import (
	"context"
	"errors"
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

// newDriver returns a usable exec driver or skips the test saying why.
func newDriver(t *testing.T) *Driver {
	t.Helper()
	if err := executor.CgroupsUsable(); err != nil {
		t.Skipf("exec driver tests need root and cgroups: %v", err)
	}
	return New(Options{})
}

// taskConfig lays out an alloc dir as the client does and returns a task
// config in it; the run is destroyed (its cgroup removed) at cleanup.
func taskConfig(t *testing.T, d *Driver, id string, res *drivers.Resources, cfg map[string]any) *drivers.TaskConfig {
	t.Helper()
	alloc := t.TempDir()
	for _, p := range []string{"alloc/logs", "alloc/data", "alloc/tmp", "web/local", "web/tmp", "web/secrets"} {
		must.NoError(t, os.MkdirAll(filepath.Join(alloc, p), 0o755))
	}
	t.Cleanup(func() { _ = d.DestroyTask(id) })
	return &drivers.TaskConfig{
		ID: id, AllocID: "a1", Name: "web", Config: cfg,
		Env:     map[string]string{"GREETING": "hello"},
		TaskDir: filepath.Join(alloc, "web"), LogDir: filepath.Join(alloc, "alloc/logs"),
		MaxFiles: 2, MaxFileSizeMB: 1, Resources: res,
	}
}

func waitExit(t *testing.T, d drivers.Driver, id string) *drivers.ExitResult {
	t.Helper()
	ch, err := d.WaitTask(context.Background(), id)
	must.NoError(t, err)
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("task did not exit")
		return nil
	}
}

func stdout(t *testing.T, tc *drivers.TaskConfig) string {
	b, err := os.ReadFile(filepath.Join(tc.LogDir, "web.stdout.0"))
	must.NoError(t, err)
	return string(b)
}

func TestExec_IsolatedView(t *testing.T) {
	d := newDriver(t)
	// A host path outside chroot_env the task must not see.
	hostOnly := filepath.Join(t.TempDir(), "host-only")
	must.NoError(t, os.WriteFile(hostOnly, []byte("x"), 0o644))
	script := `echo "pid=$$"; echo "procs=$(ls /proc | grep -c '^[0-9]*$')"; ` +
		`if [ -e ` + hostOnly + ` ]; then echo host=present; else echo host=absent; fi; ` +
		`echo "uid=$(id -u)"; echo "dir=$NOMAD_TASK_DIR"; ls -d /local /alloc/logs /secrets; ` +
		`echo "secrets=$(stat -c %a /secrets)"; touch /local/ok && echo write=ok; touch /bin/x 2>/dev/null || echo bin=ro`
	tc := taskConfig(t, d, "iso", &drivers.Resources{MemoryMB: 64, CPUShares: 100}, map[string]any{"command": "/bin/sh", "args": []any{"-c", script}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	r := waitExit(t, d, "iso")
	out := stdout(t, tc)
	must.Eq(t, 0, r.ExitCode, must.Sprint(out))
	for _, want := range []string{"pid=1\n", "host=absent\n", "uid=65534\n", "dir=/local\n", "/secrets\n", "secrets=700\n", "write=ok\n", "bin=ro\n"} {
		must.StrContains(t, out, want)
	}
	// The shell, ls, grep and the subshell: a handful of processes, not
	// the host's.
	var procs int
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "procs="); ok {
			procs, _ = strconv.Atoi(v)
		}
	}
	must.Between(t, 1, procs, 6)
}

func TestExec_OOMKilled(t *testing.T) {
	d := newDriver(t)
	// tail holds its whole 64 MB line in memory: twice the limit.
	tc := taskConfig(t, d, "oom", &drivers.Resources{MemoryMB: 32}, map[string]any{"command": "/bin/sh", "args": []any{"-c", `head -c 67108864 /dev/zero | tail -n 1 >/dev/null; echo survived`}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	r := waitExit(t, d, "oom")
	must.True(t, r.OOMKilled, must.Sprintf("exit %+v, stdout %q", r, stdout(t, tc)))
	must.EqError(t, r.Err, drivers.OOMKilledMessage)
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestExec_StopKillsDaemons(t *testing.T) {
	d := newDriver(t)
	tc := taskConfig(t, d, "daemon", nil, map[string]any{"command": "/bin/sh", "args": []any{"-c", `(setsid sleep 300 >/dev/null 2>&1 &); echo forked; exec sleep 300`}})
	_, err := d.StartTask(tc)
	must.NoError(t, err)
	var pids []int
	// Until the forking subshell has exited there are three processes.
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		u, err := d.TaskStats("daemon")
		if err != nil {
			return err
		}
		pids = u.Pids
		if len(pids) != 2 {
			return fmt.Errorf("task has pids %v, want the shell and the daemon", pids)
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
	must.NoError(t, d.StopTask("daemon", 100*time.Millisecond, "SIGTERM"))
	r := waitExit(t, d, "daemon")
	must.Eq(t, int(syscall.SIGKILL), r.Signal)
	must.False(t, r.OOMKilled)
	must.NoError(t, d.DestroyTask("daemon"))
	for _, pid := range pids {
		must.False(t, alive(pid), must.Sprintf("pid %d outlived its task", pid))
	}
}

func TestExec_StatsAndRecover(t *testing.T) {
	d := newDriver(t)
	tc := taskConfig(t, d, "rec", &drivers.Resources{MemoryMB: 64}, map[string]any{"command": "/bin/sh", "args": []any{"-c", `x=$(head -c 4000000 /dev/zero | tr '\0' a); echo ready; while [ ! -f /local/go ]; do sleep 0.05; done; exit 5`}})
	h, err := d.StartTask(tc)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Contains(readOr(tc), "ready")
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	// A second driver, as a restarted client would have.
	d2 := New(Options{})
	must.NoError(t, d2.RecoverTask(h))
	u, err := d2.TaskStats("rec")
	must.NoError(t, err)
	must.Positive(t, u.RSS)
	must.Positive(t, u.Usage)
	must.NotEq(t, 0, len(u.Pids))

	must.NoError(t, os.WriteFile(filepath.Join(tc.TaskDir, "local", "go"), nil, 0o644))
	must.Eq(t, 5, waitExit(t, d2, "rec").ExitCode)
	must.NoError(t, d2.DestroyTask("rec"))
}

func readOr(tc *drivers.TaskConfig) string {
	b, _ := os.ReadFile(filepath.Join(tc.LogDir, "web.stdout.0"))
	return string(b)
}

func TestExec_Validation(t *testing.T) {
	d := New(Options{})
	cases := []struct {
		name string
		cfg  map[string]any
		err  string
	}{
		{"no command", map[string]any{}, `missing required config key "command"`},
		{"unknown key", map[string]any{"command": "x", "image": "y"}, `unsupported config key "image"`},
		{"bad pid_mode", map[string]any{"command": "x", "pid_mode": "shared"}, `"pid_mode": "shared" is not allowed`},
		{"cap_add not allowed", map[string]any{"command": "x", "cap_add": []any{"sys_admin"}}, `capability "sys_admin" is not allowed`},
		{"unknown cap_drop", map[string]any{"command": "x", "cap_drop": []any{"bogus"}}, `unknown capability "bogus"`},
		{"relative work_dir", map[string]any{"command": "x", "work_dir": "local"}, `"work_dir": "local" must be an absolute path`},
		{"ok", map[string]any{"command": "x", "pid_mode": "host", "cap_add": []any{"NET_BIND_SERVICE"}, "cap_drop": []any{"all"}, "work_dir": "/local"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := d.ValidateConfig(tc.cfg)
			if tc.err == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.err)
		})
	}
}

// Where the client cannot isolate tasks the node does not advertise exec,
// so jobs get a "missing drivers" placement failure, and a task that
// reaches the driver anyway is refused saying why.
func TestExec_FingerprintWithoutCgroups(t *testing.T) {
	d := &Driver{opts: Options{ChrootEnv: DefaultChrootEnv}, Executor: executor.New(Name, ""), unusable: errors.New("must run as root")}
	fp := d.Fingerprint()
	must.False(t, fp.Detected)
	must.False(t, fp.Healthy)
	must.Eq(t, "exec driver needs root and cgroups: must run as root", fp.HealthDescription)
	_, err := d.StartTask(&drivers.TaskConfig{ID: "x", Config: map[string]any{"command": "/bin/true"}})
	must.ErrorContains(t, err, "exec: driver unusable on this node: must run as root")
}

// cap_add reaches a non-root task as ambient capabilities; a root task
// holds only what cap_drop and cap_add leave of the allowed set.
func TestExec_Capabilities(t *testing.T) {
	d := newDriver(t)
	cases := []struct {
		name, user string
		cfg        map[string]any
		want       []string
	}{
		{"nobody with net_bind_service", "", map[string]any{"cap_add": []any{"net_bind_service"}},
			[]string{"CapAmb:\t0000000000000400", "CapEff:\t0000000000000400"}},
		{"nobody without cap_add", "", nil, []string{"CapAmb:\t0000000000000000", "CapEff:\t0000000000000000"}},
		{"root with everything dropped but kill", "root", map[string]any{"cap_drop": []any{"all"}, "cap_add": []any{"kill"}},
			[]string{"CapBnd:\t0000000000000020", "CapEff:\t0000000000000020"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]any{"command": "/bin/grep", "args": []any{"^Cap", "/proc/self/status"}}
			for k, v := range tc.cfg {
				cfg[k] = v
			}
			id := "caps" + strconv.Itoa(i)
			task := taskConfig(t, d, id, nil, cfg)
			task.User = tc.user
			_, err := d.StartTask(task)
			must.NoError(t, err)
			must.Eq(t, 0, waitExit(t, d, id).ExitCode)
			out := stdout(t, task)
			for _, w := range tc.want {
				must.StrContains(t, out, w)
			}
		})
	}
}
