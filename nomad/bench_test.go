package nomad

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/planfit"
	"github.com/nomadq/nomadq/structs"
)

// reportLatencies adds p50 and p99 of the samples to the benchmark output.
func reportLatencies(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	pct := func(p float64) float64 {
		return float64(samples[int(p*float64(len(samples)-1))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkRaftApplyJobRegister measures Job.Register end to end through
// Raft (one job and its eval per entry), in memory and on disk.
func BenchmarkRaftApplyJobRegister(b *testing.B) {
	for _, mode := range []string{"inmem", "disk"} {
		b.Run(mode, func(b *testing.B) {
			s := benchServer(b, mode == "disk", 0)
			samples := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				var resp structs.JobRegisterResponse
				if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob(fmt.Sprintf("job-%d", i))}, &resp); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "registers/s")
			reportLatencies(b, samples)
		})
	}
}

// BenchmarkBlockingQueryWake measures the time from a write's commit to a
// blocked Job.Get returning with it.
func BenchmarkBlockingQueryWake(b *testing.B) {
	s := benchServer(b, false, 0)
	var first structs.JobRegisterResponse
	must.NoError(b, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob("watched")}, &first))
	index := first.Index
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		woke := make(chan time.Time, 1)
		go func() {
			var resp structs.SingleJobResponse
			_ = s.RPC("Job.Get", &structs.JobSpecificRequest{JobID: "watched", QueryOptions: structs.QueryOptions{
				MinQueryIndex: index, MaxQueryTime: int64(time.Minute),
			}}, &resp)
			woke <- time.Now()
		}()
		job := mockJob("watched")
		job.Priority = 1 + i%2 // differs from the last write each time
		var resp structs.JobRegisterResponse
		must.NoError(b, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &resp))
		committed := time.Now()
		samples = append(samples, (<-woke).Sub(committed))
		index = resp.Index
	}
	b.StopTimer()
	reportLatencies(b, samples)
}

// BenchmarkFSMSnapshotRestore100kAllocs measures writing a snapshot of a
// state with 100,000 allocs and restoring it.
func BenchmarkFSMSnapshotRestore100kAllocs(b *testing.B) {
	f := testFSM(b)
	node := mockNode(structs.GenerateUUID())
	node.NodeResources.Cpu.CpuShares = 1 << 40
	node.NodeResources.Memory.MemoryMB = 1 << 40
	if err := f.State().UpsertNode(1, node); err != nil {
		b.Fatal(err)
	}
	index := uint64(2)
	for j := 0; j < 100; j++ {
		job := mockJob(fmt.Sprintf("job-%d", j))
		job.Canonicalize()
		eval := mock.JobEval(job)
		if err := f.State().UpsertJobWithEval(index, job, eval); err != nil {
			b.Fatal(err)
		}
		index++
		stored, _ := f.State().JobByID(nil, job.Namespace, job.ID)
		allocs := make([]*structs.Allocation, 1000)
		for i := range allocs {
			allocs[i] = mock.Alloc(stored, node, eval.ID)
		}
		if err := f.State().UpsertPlanResults(index, &structs.ApplyPlanResultsRequest{AllocsUpdated: allocs, Job: stored, EvalID: eval.ID}); err != nil {
			b.Fatal(err)
		}
		index++
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		snap, err := f.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		var sink memSink
		if err := snap.Persist(&sink); err != nil {
			b.Fatal(err)
		}
		restored := testFSM(b)
		if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sink.Len())/(1<<20), "snapshot-MiB")
	}
}

// BenchmarkPlanApply measures the plan applier: fit checks against the
// latest state and the Raft commit, for plans of 1 and of 100 allocs. One
// leader with 5,000 ordinary nodes (so each holds a handful of allocs, as
// in a real cluster) serves both sizes; the nodes are registered by 16
// callers at once, so setup stays a few seconds.
func BenchmarkPlanApply(b *testing.B) {
	s := benchServer(b, false, 0)
	nodes := make([]*structs.Node, 5000)
	var (
		wg   sync.WaitGroup
		errs = make(chan error, len(nodes))
		sem  = make(chan struct{}, 16)
	)
	for i := range nodes {
		nodes[i] = mockNode(structs.GenerateUUID())
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var nr structs.NodeUpdateResponse
			errs <- s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: nodes[i]}, &nr)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must.NoError(b, err)
	}
	var reg structs.JobRegisterResponse
	must.NoError(b, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob("plans")}, &reg))
	job, _ := s.State().JobByID(nil, structs.DefaultNamespace, "plans")
	for _, size := range []int{1, 100} {
		b.Run(fmt.Sprintf("allocs-per-plan=%d", size), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				plan := &structs.Plan{EvalID: reg.EvalID, Priority: 50, Job: job}
				for k := 0; k < size; k++ {
					plan.AppendAlloc(mock.Alloc(job, nodes[(i*size+k)%len(nodes)], reg.EvalID))
				}
				_, commit, err := s.applyPlan(plan, &planfit.Inflight{})
				if err == nil && commit != nil {
					err = raftResult(commit)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(b.N)/secs, "plans/s")
			b.ReportMetric(float64(b.N*size)/secs, "allocs/s")
		})
	}
}

// BenchmarkSchedulePlace10kAllocs5kNodes measures a whole placement in the
// server: one batch job of 10,000 allocs on 5,000 nodes, from registration
// to the eval completing (scheduler, plan queue, applier, Raft).
func BenchmarkSchedulePlace10kAllocs5kNodes(b *testing.B) {
	s := benchServer(b, false, 1)
	for i := 0; i < 5000; i++ {
		var nr structs.NodeUpdateResponse
		must.NoError(b, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nr))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		job := mockJob(fmt.Sprintf("big-%d", i))
		job.TaskGroups[0].Count = 10000
		job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 10, MemoryMB: 10}
		var reg structs.JobRegisterResponse
		must.NoError(b, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg))
		var index uint64
		for {
			var er structs.SingleEvalResponse
			must.NoError(b, s.RPC("Eval.Get", &structs.EvalSpecificRequest{EvalID: reg.EvalID, QueryOptions: structs.QueryOptions{
				MinQueryIndex: index, MaxQueryTime: int64(time.Minute),
			}}, &er))
			index = er.Index
			if er.Eval.TerminalStatus() {
				must.Eq(b, structs.EvalStatusComplete, er.Eval.Status)
				must.MapEmpty(b, er.Eval.FailedTGAllocs)
				break
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*10000)/b.Elapsed().Seconds(), "allocs/s")
}

// benchServer starts a leader for a benchmark.
func benchServer(b *testing.B, disk bool, workers int) *Server {
	b.Helper()
	cfg := DefaultConfig()
	cfg.NodeName = fmt.Sprintf("bench-%d", serverSeq.Add(1))
	cfg.DevMode = !disk
	if disk {
		cfg.DataDir = b.TempDir()
	}
	cfg.RPCAddr.Port = 0
	cfg.SerfPort = 0
	cfg.NumSchedulers = workers
	cfg.MinHeartbeatTTL = time.Hour
	s, err := NewServer(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Shutdown() })
	waitForLeader(b, s)
	return s
}
