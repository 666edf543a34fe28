package agent

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/agent/config"
)

// BenchmarkMaxRunDurationLateness runs 100 allocs of a 3 s limit against
// mock_driver tasks that would run an hour, and reports how late the
// server saw each alloc complete (its ModifyTime from the client's update
// minus CreateTime + limit), and how late the kill itself was (the
// Killing event's time minus the deadline).
//
//	go test ./agent -run '^$' -bench MaxRunDurationLateness -benchtime 1x
//
// "burst" is one job of count 100, so every deadline is the same instant
// (the worst case: 100 kills at once contend for the client's state DB);
// "staggered" is 100 one-alloc jobs registered 50 ms apart.
func BenchmarkMaxRunDurationLateness(b *testing.B) {
	b.Run("burst", func(b *testing.B) { benchLateness(b, 1, 100, 0) })
	b.Run("staggered", func(b *testing.B) { benchLateness(b, 100, 1, 50*time.Millisecond) })
}

func benchLateness(b *testing.B, jobs, count int, gap time.Duration) {
	for b.Loop() {
		a := NewTestAgent(b, func(cfg *config.Config) { cfg.LogLevel = "ERROR" })
		c, err := api.NewClient(&api.Config{Address: a.HTTPAddr()})
		if err != nil {
			b.Fatal(err)
		}
		n, limit := jobs*count, 3*time.Second
		for j := 0; j < jobs; j++ {
			id := fmt.Sprintf("lateness-%d", j)
			job := api.NewBatchJob(id, id, "global", 50)
			job.Datacenters = []string{"*"}
			tg := api.NewTaskGroup("g", count)
			tg.MaxRunDuration = new(limit)
			task := api.NewTask("t", "mock_driver")
			task.Config = map[string]any{"run_for": "1h"}
			task.Require(&api.Resources{CPU: new(10), MemoryMB: new(10)})
			tg.AddTask(task)
			job.AddTaskGroup(tg)
			if _, _, err := c.Jobs().Register(job, nil); err != nil {
				b.Fatal(err)
			}
			time.Sleep(gap)
		}
		var allocs []*api.AllocationListStub
		deadline := time.Now().Add(30 * time.Second)
		for {
			allocs, _, err = c.Allocations().List(nil)
			if err != nil {
				b.Fatal(err)
			}
			done := 0
			for _, al := range allocs {
				if al.ClientStatus == "complete" {
					done++
				}
			}
			if done == n {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d allocs complete after 30s", done, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var seen, kill, dead []time.Duration
		for _, al := range allocs {
			if al.ClientDescription != "allocation exceeded max_run_duration" {
				b.Fatalf("alloc %s: %q", al.ID, al.ClientDescription)
			}
			dl := time.Unix(0, al.CreateTime).Add(limit)
			seen = append(seen, time.Unix(0, al.ModifyTime).Sub(dl))
			evs := al.TaskStates["t"].Events
			dead = append(dead, time.Unix(0, evs[len(evs)-1].Time).Sub(dl))
			for _, e := range evs {
				if e.Type == "Killing" {
					kill = append(kill, time.Unix(0, e.Time).Sub(dl))
				}
			}
		}
		report := func(name string, ds []time.Duration) {
			slices.Sort(ds)
			if ds[0] < 0 {
				b.Errorf("%s: early by %v", name, -ds[0])
			}
			q := func(p float64) time.Duration { return ds[int(p*float64(len(ds)-1))] }
			b.ReportMetric(float64(q(0.5).Microseconds())/1000, name+"_p50_ms")
			b.ReportMetric(float64(q(0.99).Microseconds())/1000, name+"_p99_ms")
			b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, name+"_max_ms")
			b.ReportMetric(float64(ds[0].Microseconds())/1000, name+"_min_ms")
		}
		report("seen", seen)
		report("kill", kill)
		report("dead", dead)
		a.Shutdown()
	}
}
