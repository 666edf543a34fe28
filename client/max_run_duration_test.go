package client

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// An agent shutdown is never a timeout: the task outlives its deadline
// while no client runs. The next client on the same data dir finds the
// deadline passed and kills the alloc before anything else, with the
// timeout status.
func TestClient_MaxRunDuration_ShutdownThenExpiredOnRestore(t *testing.T) {
	srv := testServer(t)
	dataDir := t.TempDir()
	r := reaper(t)
	c1 := testClient(t, srv, dataDir, nil)
	// The task itself is the witness that it outlived its deadline: it
	// writes "outlived" only once a full second past the deadline (whose
	// variable is truncated to the second) has gone by, so a client that
	// wrongly kept its timer across the shutdown kills it first.
	script := `echo "$NOMAD_ALLOC_DEADLINE" > "$NOMAD_TASK_DIR/deadline"; echo $$ >> "$NOMAD_TASK_DIR/pids"
end=$(( $(date -d "$NOMAD_ALLOC_DEADLINE" +%s) + 1 ))
while [ "$(date +%s)" -le "$end" ]; do sleep 0.1; done
echo yes > "$NOMAD_TASK_DIR/outlived"
exec sleep 600`
	job := batchJob("mrd-restore", shTask("main", script))
	job.TaskGroups[0].MaxRunDuration = new(3 * time.Second)
	register(t, srv, job)
	a := serverAlloc(t, srv, "mrd-restore", 20*time.Second, status(structs.AllocClientStatusRunning))
	local := allocdir.New(c1.cfg.AllocDir, a.ID).LocalDir("main")
	lineDone := func(s string) bool { return strings.HasSuffix(s, "\n") }
	pid, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, filepath.Join(local, "pids"), lineDone)))
	r.add(pid)
	dl := strings.TrimSpace(waitFile(t, filepath.Join(local, "deadline"), lineDone))
	deadline := time.Unix(0, a.CreateTime).Add(3 * time.Second)
	must.Eq(t, deadline.UTC().Format(time.RFC3339), dl)

	c1.Shutdown()
	waitFile(t, filepath.Join(local, "outlived"), lineDone)
	must.NoError(t, syscall.Kill(pid, 0)) // still running: shutdown did not time it out

	restarted := time.Now()
	c2 := testClient(t, srv, dataDir, nil)
	must.Eq(t, c1.NodeID(), c2.NodeID())
	a = serverAlloc(t, srv, "mrd-restore", 10*time.Second, status(structs.AllocClientStatusComplete))
	must.Eq(t, "allocation exceeded max_run_duration", a.ClientDescription)
	ts := a.TaskStates["main"]
	must.Eq(t, uint64(0), ts.Restarts)
	killing := findEvent(ts, structs.TaskKilling)
	must.Eq(t, "allocation exceeded max_run_duration", killing.DisplayMessage)
	// The kill came from the restored client, not from the first one.
	must.False(t, time.Unix(0, killing.Time).Before(restarted))
	must.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH)
}

// The JSON form of /v1/metrics reads go-metrics: the client writes both
// gauges to the agent's handle every interval, one series per alloc.
func TestClient_MaxRunDuration_GoMetricsGauges(t *testing.T) {
	inm := metrics.NewInmemSink(time.Minute, time.Minute)
	mc := metrics.DefaultConfig("nomad")
	mc.EnableHostname = false
	m, err := metrics.New(mc, inm)
	must.NoError(t, err)

	srv := testServer(t)
	c := testClient(t, srv, "", func(cfg *Config) {
		cfg.Metrics = m
		cfg.MetricsInterval = 20 * time.Millisecond
	})
	job := batchJob("mrd-gauges", mockTask("main", map[string]any{"run_for": "1h"}))
	job.TaskGroups[0].Count = 2
	job.TaskGroups[0].MaxRunDuration = new(time.Minute)
	register(t, srv, job)
	allocs := map[string]bool{}
	must.Wait(t, waitFor(func() bool {
		as, _ := srv.State().AllocsByJob(nil, "default", "mrd-gauges", true)
		for _, a := range as {
			if a.ClientStatus == structs.AllocClientStatusRunning {
				allocs[a.ID] = true
			}
		}
		return len(allocs) == 2
	}))
	must.Wait(t, waitFor(func() bool {
		found := 0
		for _, iv := range inm.Data() {
			iv.RLock()
			for key, g := range iv.Gauges {
				if !strings.HasPrefix(key, "nomad.client.allocs.max_run_duration.remaining_seconds;") {
					continue
				}
				for id := range allocs {
					if strings.Contains(key, "alloc_id="+id) && strings.Contains(key, "node_id="+c.NodeID()) && g.Value > 0 && g.Value <= 60 {
						found++
					}
				}
			}
			iv.RUnlock()
		}
		return found >= 2
	}))
}
