package client

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/structs"
)

// BenchmarkTaskExitToServerTerminal measures from a task's exit (its
// FinishedAt) to the server's state showing the alloc complete, with a
// real dev server and client talking msgpack over TCP.
func BenchmarkTaskExitToServerTerminal(b *testing.B) {
	srv := testServer(b)
	testClient(b, srv, "", func(cfg *Config) {
		cfg.RPC = nil
		cfg.Servers = []string{srv.RPCAddr().String()}
	})
	var lat []time.Duration
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("exit-%d", i)
		register(b, srv, batchJob(id, mockTask("main", map[string]any{"run_for": "50ms"})))
		var a *structs.Allocation
		var seen time.Time
		for {
			ws := memdb.NewWatchSet()
			allocs, err := srv.State().AllocsByJob(ws, "default", id, true)
			if err != nil {
				b.Fatal(err)
			}
			if len(allocs) > 0 && allocs[0].ClientStatus == structs.AllocClientStatusComplete {
				seen = time.Now()
				a = allocs[0]
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			if err := ws.WatchCtx(ctx); err != nil {
				cancel()
				b.Fatalf("alloc of %s never completed", id)
			}
			cancel()
		}
		lat = append(lat, seen.Sub(a.TaskStates["main"].FinishedAt))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
