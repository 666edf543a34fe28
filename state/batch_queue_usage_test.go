package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestBatchQueueUsageReset: a reset records the namespace's reset time,
// and a later one replaces it.
func TestBatchQueueUsageReset(t *testing.T) {
	s := testStore(t)
	reset := func(index uint64, ns string, at int64) {
		must.NoError(t, s.BatchQueueUsageReset(index, &structs.BatchQueueUsageResetRequest{Time: at,
			WriteRequest: structs.WriteRequest{Namespace: ns}}))
	}
	reset(5, "qa", 100)
	reset(6, "qb", 200)
	reset(7, "qa", 300)
	got, err := s.BatchQueueUsageResets(nil)
	must.NoError(t, err)
	must.Eq(t, map[string]time.Time{"qa": time.Unix(0, 300), "qb": time.Unix(0, 200)}, got)
	idx, err := s.Index(TableBatchQueueUsageResets)
	must.NoError(t, err)
	must.Eq(t, 7, idx)
}
