package nomad

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"

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
// = 1, the time from the Raft entry of the plan that places a workload's
// alloc to the release of the next workload. Both ends come from the
// Raft log, so every release is counted: the plan entry's AppendedAt
// (when the leader appended it, before its commit) and the release
// entry's ReleaseTime (stamped by the queue before its own commit).
// p99-from-create-µs measures from the alloc's CreateTime instead, which
// also counts the plan's encoding and wait for Raft.
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
			for b.Loop() {
				placeAll(b, s, "lat", n)
			}
			planned, created, released := raftQueueTimes(b, s)
			var fromCommit, fromCreate []time.Duration
			for i := 0; i+1 < n; i++ {
				prev, next := fmt.Sprintf("lat-%04d", i), fmt.Sprintf("lat-%04d", i+1)
				if planned[prev] == 0 || released[next] == 0 {
					b.Fatalf("no plan for %s or no release of %s in the Raft log", prev, next)
				}
				fromCommit = append(fromCommit, time.Duration(released[next]-planned[prev]))
				fromCreate = append(fromCreate, time.Duration(released[next]-created[prev]))
			}
			b.ReportMetric(float64(len(fromCommit)), "samples")
			reportLatencies(b, fromCommit)
			slices.Sort(fromCreate)
			b.ReportMetric(float64(fromCreate[len(fromCreate)*99/100].Microseconds()), "p99-from-create-µs")
		})
	}
}

// raftQueueTimes reads the leader's Raft log: per job, the time its first
// plan entry was appended and its alloc's CreateTime, and the time of its
// release (unix nanoseconds).
func raftQueueTimes(b *testing.B, s *Server) (planned, created, released map[string]int64) {
	planned, created, released = map[string]int64{}, map[string]int64{}, map[string]int64{}
	first, err := s.raftStore.FirstIndex()
	if err != nil {
		b.Fatal(err)
	}
	last, err := s.raftStore.LastIndex()
	if err != nil {
		b.Fatal(err)
	}
	for i := first; i <= last; i++ {
		var l raft.Log
		if err := s.raftStore.GetLog(i, &l); err != nil || len(l.Data) == 0 {
			continue
		}
		switch structs.MessageType(l.Data[0]) {
		case structs.ApplyPlanResultsRequestType:
			var req structs.ApplyPlanResultsRequest
			if err := structs.Decode(l.Data[1:], &req); err != nil {
				b.Fatal(err)
			}
			for _, a := range req.AllocsUpdated {
				if planned[a.JobID] == 0 {
					planned[a.JobID], created[a.JobID] = l.AppendedAt.UnixNano(), a.CreateTime
				}
			}
		case structs.BatchQueueReleaseRequestType:
			var req structs.BatchQueueReleaseRequest
			if err := structs.Decode(l.Data[1:], &req); err != nil {
				b.Fatal(err)
			}
			for _, r := range req.Release {
				released[r.JobID] = req.ReleaseTime
			}
		}
	}
	return planned, created, released
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
