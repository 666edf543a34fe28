package agent

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// execAgent starts an agent whose node runs exec tasks, or skips the test
// saying why this machine cannot.
func execAgent(t *testing.T) (*Agent, *api.Client) {
	t.Helper()
	if err := executor.CgroupsUsable(); err != nil {
		t.Skipf("exec driver acceptance tests need root and cgroups: %v", err)
	}
	a := NewTestAgent(t, nil)
	return a, apiClient(t, a)
}

func execTask(name, script string, memoryMB int) *api.Task {
	task := api.NewTask(name, "exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
	task.KillTimeout = new(500 * time.Millisecond)
	task.Require(&api.Resources{CPU: new(50), MemoryMB: new(memoryMB)})
	return task
}

func execJob(id string, task *api.Task, restarts int) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(restarts), Mode: new("fail"), Delay: new(10 * time.Millisecond), Interval: new(time.Hour)}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func onlyAlloc(t *testing.T, c *api.Client, jobID string, ok func(*api.AllocationListStub) bool) *api.Allocation {
	t.Helper()
	stubs := jobAllocs(t, c, jobID, 1, 60*time.Second, ok)
	a, _, err := c.Allocations().Info(stubs[0].ID, nil)
	must.NoError(t, err)
	return a
}

func taskLog(t *testing.T, a *Agent, allocID, task string) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/v1/client/fs/logs/%s?task=%s&type=stdout&plain=true", a.HTTPAddr(), allocID, task))
	must.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return string(b)
}

// The task sees its own PID namespace and its chroot, not the host's.
func TestExecDriver_IsolatedFromHost(t *testing.T) {
	a, c := execAgent(t)
	hostOnly := filepath.Join(t.TempDir(), "host-only")
	must.NoError(t, os.WriteFile(hostOnly, nil, 0o644))
	script := `echo "pid=$$"; echo "procs=$(ls /proc | grep -c '^[0-9]*$')"; ` +
		`if [ -e ` + hostOnly + ` ]; then echo host=present; else echo host=absent; fi; ` +
		`ls -d /local /alloc /secrets /bin; echo "uid=$(id -u)"`
	register(t, c, execJob("iso", execTask("main", script, 64), 0))
	alloc := onlyAlloc(t, c, "iso", isTerminal)
	out := taskLog(t, a, alloc.ID, "main")
	must.Eq(t, "complete", alloc.ClientStatus, must.Sprint(out))
	for _, want := range []string{"pid=1\n", "host=absent\n", "/local\n", "/alloc\n", "/secrets\n", "/bin\n", "uid=65534\n"} {
		must.StrContains(t, out, want)
	}
	// The host runs this test's agent and much more; the task sees only
	// its shell and the commands it ran.
	must.StrNotContains(t, out, "procs=1\n\n")
	var procs int
	_, err := fmt.Sscanf(out[strings.Index(out, "procs="):], "procs=%d", &procs)
	must.NoError(t, err)
	must.Between(t, 1, procs, 6)
}

// A task that allocates twice its memory is OOM killed: the Terminated
// event says so, the restart policy applies, and the counter counts.
func TestExecDriver_OOMKilled(t *testing.T) {
	a, c := execAgent(t)
	task := execTask("main", `head -c 67108864 /dev/zero | tail -n 1 >/dev/null`, 32)
	register(t, c, execJob("oom", task, 1))
	alloc := onlyAlloc(t, c, "oom", isTerminal)
	must.Eq(t, "failed", alloc.ClientStatus)
	ts := alloc.TaskStates["main"]
	var oom []*api.TaskEvent
	var types []string
	for _, e := range ts.Events {
		types = append(types, e.Type)
		if e.Type == "Terminated" {
			oom = append(oom, e)
		}
	}
	// One restart, then the policy gives up.
	must.Eq(t, []string{"Received", "Task Setup", "Started", "Terminated", "Restarting", "Started", "Terminated", "Not Restarting"}, types)
	for _, e := range oom {
		must.Eq(t, "true", e.Details["oom_killed"])
		must.StrContains(t, e.DisplayMessage, `Exit Message: "OOM Killed"`)
	}
	must.Eq(t, uint64(1), ts.Restarts)
	must.Eq(t, uint64(2), a.client.(*nodeClient).c.MetricsSnapshot().OOMKills)
}

// A task that forks a daemon leaves nothing behind once stopped, and its
// stats come from its cgroup.
func TestExecDriver_StopLeavesNoProcessAndStats(t *testing.T) {
	a, c := execAgent(t)
	script := `(setsid sh -c 'x=$(head -c 2000000 /dev/zero | tr "\0" a); sleep 300' >/dev/null 2>&1 &); echo forked; exec sleep 300`
	register(t, c, execJob("daemon", execTask("main", script, 64), 0))
	alloc := onlyAlloc(t, c, "daemon", isRunning)

	ar, err := a.client.(*nodeClient).c.AllocRunner(alloc.ID)
	must.NoError(t, err)
	var pids []int
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		u, err := ar.TaskRunner("main").Stats()
		if err != nil || u == nil {
			return fmt.Errorf("no stats yet: %v", err)
		}
		if pids = u.Pids; len(pids) < 3 {
			return fmt.Errorf("pids %v: the daemon has not started", pids)
		}
		return nil
	}), wait.Timeout(15*time.Second), wait.Gap(50*time.Millisecond)))

	usage, err := c.Allocations().Stats(alloc, nil)
	must.NoError(t, err)
	mem := usage.Tasks["main"].ResourceUsage.MemoryStats
	must.Positive(t, mem.RSS)
	must.Positive(t, mem.Usage)
	must.SliceContains(t, mem.Measured, "Usage")

	_, _, err = c.Jobs().Deregister("daemon", false, nil)
	must.NoError(t, err)
	onlyAlloc(t, c, "daemon", isTerminal)
	for _, pid := range pids {
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			return syscall.Kill(pid, 0) != nil
		}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)), must.Sprintf("pid %d outlived its stopped task", pid))
	}
}

// max_run_duration ends an exec task through the same kill as any other:
// every process of its cgroup is gone afterwards.
func TestExecDriver_MaxRunDuration(t *testing.T) {
	a, c := execAgent(t)
	// Long enough that a loaded machine still sees the task running
	// before it is killed. The memory leaves room for the init step
	// (this binary, with the race detector when tests run under it),
	// which runs in the task's cgroup until it execs the command.
	job := maxRunJob("deadline", "batch", 5*time.Second, "")
	job.TaskGroups[0].Tasks[0] = execTask("main", `sleep 300`, 128)
	register(t, c, job)
	alloc := onlyAlloc(t, c, "deadline", isRunning)
	ar, err := a.client.(*nodeClient).c.AllocRunner(alloc.ID)
	must.NoError(t, err)
	var pids []int
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		u, err := ar.TaskRunner("main").Stats()
		if err != nil || u == nil || len(u.Pids) == 0 {
			return fmt.Errorf("no pids yet: %v (%+v)", err, u)
		}
		pids = u.Pids
		return nil
	}), wait.Timeout(15*time.Second), wait.Gap(50*time.Millisecond)))

	alloc = onlyAlloc(t, c, "deadline", isTerminal)
	must.Eq(t, maxRunReason, alloc.ClientDescription)
	for _, pid := range pids {
		must.Error(t, syscall.Kill(pid, 0), must.Sprintf("pid %d outlived max_run_duration", pid))
	}
}
