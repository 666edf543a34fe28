package scheduler

import (
	"math/rand"
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
	h := newHarness(b)
	h.Rand = rand.New(rand.NewSource(1))
	h.addNodes(benchNodes, func(i int, n *structs.Node) {
		n.ComputedClass = "v1:linux-large"
	})
	job := mockJob("bench", structs.JobTypeBatch, benchAllocs)
	job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 256}
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	h.State.upsertJob(job)
	return h, job
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
