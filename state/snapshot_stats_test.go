package state

import (
	"bytes"
	"testing"

	"github.com/shoenig/test/must"
)

func TestSnapshotStats_CountsEveryTable(t *testing.T) {
	s := testStore(t)
	job := mockBatchJob("stats")
	must.NoError(t, s.UpsertJob(10, job))

	snap, err := s.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(t, err)

	stats, count, size, err := SnapshotStats(bytes.NewReader(buf.Bytes()))
	must.NoError(t, err)
	byName := map[string]SnapshotTypeStats{}
	sum := 0
	for _, st := range stats {
		byName[st.Name] = st
		sum += st.Count
	}
	must.Eq(t, 1, byName["JobSnapshot"].Count)
	must.Eq(t, 1, byName["JobVersionSnapshot"].Count)
	must.Eq(t, 1, byName["JobSummarySnapshot"].Count)
	must.Positive(t, byName["JobSnapshot"].Sum)
	must.Eq(t, sum, count)
	must.Less(t, buf.Len(), size)

	_, _, _, err = SnapshotStats(bytes.NewReader(buf.Bytes()[:buf.Len()-1]))
	must.ErrorContains(t, err, "without an end record")
}
