package structs

import (
	"runtime"
	"testing"

	"github.com/shoenig/test/must"
)

// An alloc's placement metric, as the FSM decodes it from a plan's Raft
// entry, keeps five nodes' scores (two scorers each) in under 1.2 KB:
// 953 bytes here, against 2,113 when the scores were maps.
func TestAllocMetric_DecodedScoresStaySmall(t *testing.T) {
	m := &AllocMetric{NodesEvaluated: 7, NodesInPool: 1000, NodePool: "default"}
	for i := range 5 {
		m.ScoreMetaData = append(m.ScoreMetaData, &NodeScoreMeta{
			NodeID:    GenerateUUID(),
			Scores:    NodeScores{{Name: "binpack", Score: 0.25 * float64(i)}, {Name: "job-anti-affinity", Score: -0.5}},
			NormScore: 0.1 * float64(i),
		})
	}
	buf, err := Encode(0, m)
	must.NoError(t, err)
	const n = 2000
	kept := make([]*AllocMetric, n)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range kept {
		var d AllocMetric
		must.NoError(t, Decode(buf[1:], &d))
		kept[i] = &d
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("a decoded metric with five nodes' scores: %.0f bytes", per)
	must.Less(t, 1200, per)
	runtime.KeepAlive(kept)
}
