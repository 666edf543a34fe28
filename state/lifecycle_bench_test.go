package state

import (
	"fmt"
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// BenchmarkSmallJobLifecycle runs the store writes of one single-alloc
// batch job from registration to completion, one transaction per Raft
// entry as the FSM applies them (register with its eval, plan with the
// alloc, eval complete, client running, client complete), on a store that
// already holds 20,000 finished jobs: the store's share of issue 22's many
// small jobs.
func BenchmarkSmallJobLifecycle(b *testing.B) {
	s := testStore(b)
	nodes := make([]string, 100)
	index := uint64(1)
	for i := range nodes {
		n := mockNode()
		must.NoError(b, s.UpsertNode(index, n))
		nodes[i] = n.ID
		index++
	}
	lifecycle := func(i int) {
		job := mockBatchJob(fmt.Sprintf("small-%d", i))
		eval := mockEval(job, structs.EvalStatusPending)
		must.NoError(b, s.UpsertJobWithSubmission(index, job, nil, eval))
		index++
		stored, err := s.JobByID(nil, job.Namespace, job.ID)
		must.NoError(b, err)
		alloc := mockAlloc(stored, nodes[i%len(nodes)], eval.ID, structs.AllocClientStatusPending)
		must.NoError(b, s.UpsertPlanResults(index, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{alloc}, Job: stored, EvalID: eval.ID}))
		index++
		done := eval.Copy()
		done.Status = structs.EvalStatusComplete
		must.NoError(b, s.UpsertEvals(index, []*structs.Evaluation{done}))
		index++
		for _, status := range []string{structs.AllocClientStatusRunning, structs.AllocClientStatusComplete} {
			must.NoError(b, s.UpdateAllocsFromClient(index, []*structs.Allocation{clientUpdate(alloc, status)}))
			index++
		}
	}
	for i := range 20_000 {
		lifecycle(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		lifecycle(20_000 + i)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/job")
}
