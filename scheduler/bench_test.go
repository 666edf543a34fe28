package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

const (
	benchNodes  = 5_000
	benchAllocs = 10_000
)

// benchHarness is a cluster of benchNodes empty nodes and one batch job of
// benchAllocs allocations.
func benchHarness(b *testing.B) (*Harness, *structs.Job) {
	return placementHarness(b, benchNodes, structs.JobTypeBatch, false)
}

// placementHarness is a cluster of nodes empty nodes (spread over ten
// racks) and one job of benchAllocs allocations of the given type,
// spread over the racks when spread is set.
func placementHarness(b *testing.B, nodes int, typ string, spread bool) (*Harness, *structs.Job) {
	h := newHarness(b)
	h.Rand = rand.New(rand.NewPCG(1, 2))
	h.addNodes(nodes, func(i int, n *structs.Node) {
		n.ComputedClass = "v1:linux-large"
		n.Meta["rack"] = fmt.Sprintf("r%d", i%10)
	})
	job := mockJob("bench", typ, benchAllocs)
	job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 256}
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	if spread {
		job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	}
	h.State.upsertJob(job)
	return h, job
}

// BenchmarkPlacement measures the scheduler alone, in microseconds per
// placement: one eval placing a 10,000-alloc job on 1,000 and on 5,000
// nodes, batch and service, with and without a spread over ten racks.
// The planner accepts each plan without applying it. `make bench` reads
// the us/placement figure into website/performance.md.
func BenchmarkPlacement(b *testing.B) {
	for _, nodes := range []int{1_000, 5_000} {
		for _, typ := range []string{structs.JobTypeBatch, structs.JobTypeService} {
			for _, spread := range []bool{false, true} {
				name := fmt.Sprintf("nodes=%d/type=%s/spread=%v", nodes, typ, spread)
				b.Run(name, func(b *testing.B) {
					h, job := placementHarness(b, nodes, typ, spread)
					h.NoApply = true
					b.ResetTimer()
					for range b.N {
						h.Plans, h.Results, h.Updated = nil, nil, nil
						if err := h.Process(job.Type, mockEval(job)); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*benchAllocs), "us/placement")
					must.Len(b, benchAllocs, h.placed())
					must.MapEmpty(b, h.lastEval().FailedTGAllocs)
				})
			}
		}
	}
}

func reportRate(b *testing.B, start time.Time) {
	b.ReportMetric(float64(benchAllocs)*float64(b.N)/time.Since(start).Seconds(), "allocs/s")
}

// BenchmarkPlace10kAllocs5kNodes measures the scheduler alone: one eval
// placing a 10,000-alloc batch job on 5,000 nodes; the planner accepts
// the plan without applying it.
func BenchmarkPlace10kAllocs5kNodes(b *testing.B) {
	h, job := benchHarness(b)
	h.NoApply = true
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		h.Plans, h.Results, h.Updated = nil, nil, nil
		if err := h.Process(job.Type, mockEval(job)); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, start)
	b.StopTimer()
	must.Len(b, benchAllocs, h.placed())
	must.MapEmpty(b, h.lastEval().FailedTGAllocs)
}

// BenchmarkPlace10kAllocs5kNodesWithApplier adds the harness's plan
// applier (per-node fit check and state writes), a stand-in for the
// server's.
func BenchmarkPlace10kAllocs5kNodesWithApplier(b *testing.B) {
	var elapsed time.Duration
	for range b.N {
		b.StopTimer()
		h, job := benchHarness(b)
		b.StartTimer()
		start := time.Now()
		if err := h.Process(job.Type, mockEval(job)); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		b.StopTimer()
		must.Len(b, benchAllocs, h.liveAllocs(job))
		b.StartTimer()
	}
	b.ReportMetric(float64(benchAllocs)*float64(b.N)/elapsed.Seconds(), "allocs/s")
}

// BenchmarkSmallJobEval measures what the many-small-jobs shape pays per
// job: one eval placing a one-alloc batch job on a cluster of 100, 1,000
// and 5,000 nodes, where the per-eval cost (reading and shuffling the
// ready nodes, building the stack) dwarfs the one placement. The node set
// is shared between evals, as a server's snapshots share it.
func BenchmarkSmallJobEval(b *testing.B) {
	for _, nodes := range []int{100, 1_000, 5_000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			h, _ := placementHarness(b, nodes, structs.JobTypeBatch, false)
			h.NoApply = true
			job := mockJob("small", structs.JobTypeBatch, 1)
			job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 256}
			h.State.upsertJob(job)
			shared := h.fixedShared()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				h.Plans, h.Results, h.Updated = nil, nil, nil
				eval := mockEval(job)
				h.State.evals[eval.ID] = eval
				s, err := NewScheduler(job.Type, Config{Now: func() time.Time { return h.Now }, Rand: h.Rand}, shared, h)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Process(eval); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			must.Len(b, 1, h.placed())
		})
	}
}
