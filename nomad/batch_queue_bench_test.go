package nomad

import (
	"fmt"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// bigNode is a node that fits thousands of mock jobs.
func bigNode() *structs.Node {
	n := mockNode(structs.GenerateUUID())
	n.NodeResources.Cpu.CpuShares = 1_000_000
	n.NodeResources.Memory.MemoryMB = 1_000_000
	n.NodeResources.Disk.DiskMB = 10_000_000
	return n
}

func setBatchQueue(b *testing.B, s *Server, bq structs.BatchQueueConfig) {
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue = bq
	var reply structs.SchedulerSetConfigurationResponse
	if err := s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: *cfg}, &reply); err != nil {
		b.Fatal(err)
	}
}

// placeAll registers n jobs and returns once each has an alloc.
func placeAll(b *testing.B, s *Server, prefix string, n int) {
	for i := range n {
		var resp structs.JobRegisterResponse
		if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob(fmt.Sprintf("%s-%04d", prefix, i))}, &resp); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ws := memdb.NewWatchSet()
		allocs, err := s.State().Allocs(ws)
		if err != nil {
			b.Fatal(err)
		}
		placed := 0
		for _, a := range allocs {
			if len(a.JobID) > len(prefix) && a.JobID[:len(prefix)] == prefix {
				placed++
			}
		}
		if placed >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d placed after 2m", placed, n)
		}
		ws.Watch(time.After(time.Second))
	}
}

// BenchmarkBatchQueue_ReleaseLatency measures, with concurrent_placements
// = 1, the time from the plan that places a workload's alloc (its
// CreateTime, stamped before the commit) to the release of the next
// workload (the Raft-stored ReleaseTime).
func BenchmarkBatchQueue_ReleaseLatency(b *testing.B) {
	for _, mode := range []string{"inmem", "disk"} {
		b.Run(mode, func(b *testing.B) {
			const n = 300
			s := benchServer(b, mode == "disk", 2)
			var nr structs.NodeUpdateResponse
			if err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: bigNode()}, &nr); err != nil {
				b.Fatal(err)
			}
			setBatchQueue(b, s, structs.BatchQueueConfig{Enabled: true, Order: "fifo", ConcurrentPlacements: 1, WorkloadTimeout: time.Hour})
			released := make(map[string]int64)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					ws := memdb.NewWatchSet()
					entries, _ := s.State().BatchQueueEntries(ws)
					for _, e := range entries {
						if e.Released() && released[e.JobID] == 0 {
							released[e.JobID] = e.ReleaseTime()
						}
					}
					ws.Add(stop)
					if ws.Watch(nil) {
						return
					}
					select {
					case <-stop:
						return
					default:
					}
				}
			}()
			for b.Loop() {
				placeAll(b, s, "lat", n)
			}
			close(stop)
			<-done
			var samples []time.Duration
			for i := 0; i+1 < n; i++ {
				prev, next := fmt.Sprintf("lat-%04d", i), fmt.Sprintf("lat-%04d", i+1)
				allocs, _ := s.State().AllocsByJob(nil, structs.DefaultNamespace, prev, true)
				if len(allocs) == 0 || released[next] == 0 {
					continue
				}
				samples = append(samples, time.Duration(released[next]-allocs[0].CreateTime))
			}
			b.ReportMetric(float64(len(samples)), "samples")
			reportLatencies(b, samples)
		})
	}
}

// BenchmarkBatchQueue_EndToEnd places 1,000 single-alloc batch jobs with
// the queue off and on (concurrent_placements = 8).
func BenchmarkBatchQueue_EndToEnd(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("queue=%v", on), func(b *testing.B) {
			s := benchServer(b, false, 2)
			var nr structs.NodeUpdateResponse
			if err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: bigNode()}, &nr); err != nil {
				b.Fatal(err)
			}
			setBatchQueue(b, s, structs.BatchQueueConfig{Enabled: on, Order: "fifo", ConcurrentPlacements: 8, WorkloadTimeout: time.Hour})
			run := 0
			for b.Loop() {
				run++
				placeAll(b, s, fmt.Sprintf("e2e%d", run), 1000)
			}
		})
	}
}
