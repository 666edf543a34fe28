package agent

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

// TestE2ELong_SimNodes5000 registers 5,000 simulated nodes on a dev
// agent, registers 5 batch jobs of count 1,000 at once and logs the
// placement rate from the first job registration to the last alloc's
// CreateTime (the figure in website/simulator.md). make e2e-long runs it.
func TestE2ELong_SimNodes5000(t *testing.T) {
	if os.Getenv("NOMADQ_E2E_LONG") != "1" {
		t.Skip("long: set NOMADQ_E2E_LONG=1 (make e2e-long)")
	}
	const nodes, jobs, count = 5000, 5, 1000
	start := time.Now()
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.SimNodes = nodes
		c.LogLevel = "WARN"
	})
	sc := a.Client().(*simClient).Sim()
	select {
	case <-sc.Ready():
	case <-time.After(5 * time.Minute):
		t.Fatalf("%d of %d simulated nodes registered after 5m", sc.Registered(), nodes)
	}
	registered := time.Since(start)
	c := apiClient(t, a)
	list, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	ready := 0
	for _, n := range list {
		if n.Status == "ready" {
			ready++
		}
	}
	must.Eq(t, nodes, ready)
	t.Logf("%d simulated nodes registered and ready in %v (%.0f nodes/s)", nodes, registered.Round(time.Millisecond), float64(nodes)/registered.Seconds())

	var wg sync.WaitGroup
	errs := make(chan error, jobs)
	for i := range jobs {
		wg.Go(func() {
			id := fmt.Sprintf("c%d", i)
			job := &api.Job{
				ID: &id, Name: &id, Type: new("batch"), Datacenters: []string{"*"},
				TaskGroups: []*api.TaskGroup{{
					Name: new("g"), Count: new(count),
					Tasks: []*api.Task{{
						Name: "t", Driver: "mock_driver",
						Config:    map[string]any{"run_for": "10m"},
						Resources: &api.Resources{CPU: new(100), MemoryMB: new(64)},
					}},
				}},
			}
			if _, _, err := c.Jobs().Register(job, nil); err != nil {
				errs <- fmt.Errorf("register %s: %w", id, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must.NoError(t, err)
	}

	var first, last int64
	deadline := time.Now().Add(10 * time.Minute)
	for {
		placed := 0
		first, last = 0, 0
		for i := range jobs {
			id := fmt.Sprintf("c%d", i)
			j, _, err := c.Jobs().Info(id, nil)
			must.NoError(t, err)
			if first == 0 || *j.SubmitTime < first {
				first = *j.SubmitTime
			}
			allocs, _, err := c.Jobs().Allocations(id, false, nil)
			must.NoError(t, err)
			placed += len(allocs)
			for _, al := range allocs {
				last = max(last, al.CreateTime)
			}
		}
		if placed == jobs*count {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d allocs placed after 10m", placed, jobs*count)
		}
		time.Sleep(500 * time.Millisecond)
	}
	span := time.Duration(last - first)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d allocs placed on %d simulated nodes in %v from the first job registration to the last alloc's CreateTime: %.0f placements/s (heap %d MiB, goroutines %d)",
		jobs*count, nodes, span.Round(time.Millisecond), float64(jobs*count)/span.Seconds(), ms.HeapAlloc>>20, runtime.NumGoroutine())
}
