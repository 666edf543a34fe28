package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// An exec task keeps running while its client is down; the restarted
// client re-attaches to it (stats from its cgroup), sees it exit, and
// never starts it twice.
func TestClient_RestartReattachesToExecTask(t *testing.T) {
	if err := executor.CgroupsUsable(); err != nil {
		t.Skipf("exec tasks need root and cgroups: %v", err)
	}
	srv := testServer(t)
	dataDir := t.TempDir()
	c1 := testClient(t, srv, dataDir, nil)
	task := shTask("main", `echo run >> /local/runs; while [ ! -f /local/go ]; do sleep 0.05; done; echo done; exit 0`)
	task.Driver = "exec"
	task.KillTimeout = 500 * time.Millisecond
	task.Resources.MemoryMB = 64
	register(t, srv, batchJob("long", task))
	a := serverAlloc(t, srv, "long", 20*time.Second, status(structs.AllocClientStatusRunning))
	local := allocdir.New(c1.cfg.AllocDir, a.ID).LocalDir("main")
	waitFile(t, filepath.Join(local, "runs"), func(s string) bool { return s == "run\n" })

	c1.crash()

	c2 := testClient(t, srv, dataDir, nil)
	ar, err := c2.AllocRunner(a.ID)
	must.NoError(t, err)
	st, _ := ar.ClientStatus()
	must.Eq(t, structs.AllocClientStatusRunning, st)
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		usage, err := c2.AllocStats(a.ID)
		if err != nil {
			return err
		}
		if m := usage.ResourceUsage.MemoryStats; m.RSS == 0 || m.Usage == 0 {
			return fmt.Errorf("no memory measured yet: %+v", m)
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	must.NoError(t, os.WriteFile(filepath.Join(local, "go"), nil, 0o644))
	a = serverAlloc(t, srv, "long", 20*time.Second, status(structs.AllocClientStatusComplete))
	runs, err := os.ReadFile(filepath.Join(local, "runs"))
	must.NoError(t, err)
	must.Eq(t, "run\n", string(runs))
	ts := a.TaskStates["main"]
	must.Eq(t, 1, strings.Count(strings.Join(eventTypes(ts), ","), "Started"))
	must.Eq(t, "Exit Code: 0", findEvent(ts, structs.TaskTerminated).DisplayMessage)
}
