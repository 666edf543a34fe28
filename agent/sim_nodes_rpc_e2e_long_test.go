package agent

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// TestE2ELong_SimNodes10000OverRPC starts a server-only agent and a
// client-only agent simulating 10,000 nodes that reach it over TCP
// (client.ServerRPC: one multiplexed connection), and logs what the
// nodes cost once all are ready and watching their allocs (the figures
// in website/reliability.md). make e2e-long runs it.
func TestE2ELong_SimNodes10000OverRPC(t *testing.T) {
	if os.Getenv("NOMADQ_E2E_LONG") != "1" {
		t.Skip("long: set NOMADQ_E2E_LONG=1 (make e2e-long)")
	}
	const nodes = 10_000
	srv := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.LogLevel = "WARN"
	})
	heapBefore, goBefore := liveHeap(), runtime.NumGoroutine()

	start := time.Now()
	cfg := config.Dev()
	cfg.Name = "sims"
	cfg.Ports = &config.Ports{}
	cfg.LogLevel = "WARN"
	cfg.DevMode = false
	cfg.Server.Enabled = false
	cfg.DataDir = t.TempDir()
	cfg.Client.Servers = []string{srv.RPCAddr()}
	cfg.Client.SimNodes = nodes
	cli, err := New(cfg, testLogOutput())
	must.NoError(t, err)
	t.Cleanup(func() { _ = cli.ShutdownKillingTasks() })
	sc := cli.Client().(*simClient).Sim()
	select {
	case <-sc.Ready():
	case <-time.After(10 * time.Minute):
		t.Fatalf("%d of %d simulated nodes registered after 10m", sc.Registered(), nodes)
	}
	ready := time.Since(start)
	list, _, err := apiClient(t, srv).Nodes().List(nil)
	must.NoError(t, err)
	up := 0
	for _, n := range list {
		if n.Status == "ready" {
			up++
		}
	}
	must.Eq(t, nodes, up)
	heapAfter, goAfter := liveHeap(), runtime.NumGoroutine()
	t.Logf("%d simulated nodes over RPC registered and ready in %v: live heap %d MiB -> %d MiB (%.1f KiB per node), goroutines %d -> %d (%.3f per node); server and simulator together",
		nodes, ready.Round(time.Millisecond), heapBefore>>20, heapAfter>>20, float64(heapAfter-heapBefore)/nodes/1024,
		goBefore, goAfter, float64(goAfter-goBefore)/nodes)
}

// liveHeap returns the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
