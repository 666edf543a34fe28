package allocrunner

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/client/drivers/rawexec"
	"github.com/nomadq/nomadq/client/state"
	"github.com/nomadq/nomadq/structs"
)

func TestMain(m *testing.M) {
	if executor.MaybeRun() {
		return
	}
	os.Exit(m.Run())
}

func benchRunner(b *testing.B, db *state.DB, root string, ds map[string]drivers.Driver, alloc *structs.Allocation, running chan<- struct{}) *AllocRunner {
	sent := false
	ar, err := New(Config{
		Alloc: alloc, Logger: hclog.NewNullLogger(), State: db, AllocDirRoot: root, Drivers: ds,
		Node: &structs.Node{ID: "n1", Name: "n1", Datacenter: "dc1"}, Region: "global",
		OnUpdate: func(a *structs.Allocation) {
			if !sent && a.ClientStatus == structs.AllocClientStatusRunning {
				sent = true
				running <- struct{}{}
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.PutAlloc(alloc); err != nil {
		b.Fatal(err)
	}
	return ar
}

// BenchmarkAllocStartToRunning measures from an alloc runner's start to
// its alloc reporting "running" (state persisted in bbolt on the way).
func BenchmarkAllocStartToRunning(b *testing.B) {
	for _, tc := range []struct {
		name string
		task *structs.Task
	}{
		{"mock_driver", &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1h"}, KillTimeout: time.Second}},
		{"raw_exec", &structs.Task{Name: "t", Driver: rawexec.Name, Config: map[string]any{"command": "/bin/sleep", "args": []any{"3600"}}, KillTimeout: time.Second}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			db, err := state.Open(filepath.Join(dir, "state.db"), false)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ds := map[string]drivers.Driver{mock.Name: mock.New(), rawexec.Name: rawexec.New(rawexec.Options{Enabled: true})}
			var total time.Duration
			for i := 0; i < b.N; i++ {
				running := make(chan struct{}, 1)
				ar := benchRunner(b, db, dir, ds, testAlloc(tc.task), running)
				start := time.Now()
				go ar.Run()
				<-running
				total += time.Since(start)
				b.StopTimer()
				ar.Destroy()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "us/start")
		})
	}
}

// BenchmarkClientMemory500MockAllocs reports the heap and goroutines of
// 500 running mock_driver allocs. It is a measurement, not a loop: it
// runs once whatever b.N is.
func BenchmarkClientMemory500MockAllocs(b *testing.B) {
	for i := 0; i < min(b.N, 1); i++ {
		dir := b.TempDir()
		db, err := state.Open(filepath.Join(dir, "state.db"), false)
		if err != nil {
			b.Fatal(err)
		}
		ds := map[string]drivers.Driver{mock.Name: mock.New()}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		running := make(chan struct{}, 500)
		var runners []*AllocRunner
		for j := 0; j < 500; j++ {
			ar := benchRunner(b, db, dir, ds, testAlloc(&structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1h"}}), running)
			runners = append(runners, ar)
			go ar.Run()
		}
		for j := 0; j < 500; j++ {
			<-running
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(1<<20), "MiB-heap")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0)/500, "goroutines/alloc")
		for _, ar := range runners {
			ar.Shutdown()
		}
		db.Close()
	}
}
