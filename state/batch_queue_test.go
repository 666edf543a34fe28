package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// populateBatchQueue queues a batch job; populate enabled the queue. It
// writes at populate's last index so index expectations stay.
func populateBatchQueue(t testing.TB, s *StateStore) {
	t.Helper()
	queued := mockBatchJob("queued")
	must.NoError(t, s.UpsertJobWithEval(9, queued, mockEval(queued, structs.EvalStatusPending)))
}

// queueOnStore is a store with the batch queue switched on at index 1.
func queueOnStore(t *testing.T) *StateStore {
	t.Helper()
	s := testStore(t)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	must.NoError(t, s.SchedulerSetConfig(1, cfg))
	return s
}

func TestBatchQueue_RoutingAndSameEntryCancels(t *testing.T) {
	s := queueOnStore(t)

	job := mockBatchJob("a")
	first := mockEval(job, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(2, job, first))
	must.True(t, s.BatchQueueHoldsEval(first))

	// Re-register: same sort key, old eval canceled in the same write.
	changed := mockBatchJob("a")
	changed.Priority = 70
	second := mockEval(changed, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(3, changed, second))
	e, err := s.BatchQueueEntryByJob(nil, structs.DefaultNamespace, "a")
	must.NoError(t, err)
	must.Eq(t, 2, e.EnqueueIndex)
	must.Eq(t, second.ID, e.EvalID)
	old, err := s.EvalByID(nil, first.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusCancelled, old.Status)

	// A release is applied once.
	rel := []structs.BatchQueueRef{{Namespace: "default", JobID: "a", EvalID: second.ID}}
	evs, err := s.BatchQueueApply(4, &structs.BatchQueueReleaseRequest{Release: rel, ReleaseTime: 1})
	must.NoError(t, err)
	must.Len(t, 1, evs)
	evs, err = s.BatchQueueApply(5, &structs.BatchQueueReleaseRequest{Release: rel, ReleaseTime: 2})
	must.NoError(t, err)
	must.SliceEmpty(t, evs)
	must.False(t, s.BatchQueueHoldsEval(second))
	stats, err := s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Released: 1, Enqueued: 1}, stats)

	// Non-register evals and service jobs bypass the queue.
	svc := mockJob("svc")
	svcEval := mockEval(svc, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(6, svc, svcEval))
	must.False(t, s.BatchQueueHoldsEval(svcEval))
	b := mockBatchJob("b")
	bEval := mockEval(b, structs.EvalStatusPending)
	bEval.TriggeredBy = structs.EvalTriggerNodeUpdate
	must.NoError(t, s.UpsertJobWithEval(7, b, bEval))
	must.False(t, s.BatchQueueHoldsEval(bEval))

	// Purging a queued job removes the entry and cancels its eval.
	c := mockBatchJob("c")
	cEval := mockEval(c, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(8, c, cEval))
	must.NoError(t, s.DeleteJob(9, structs.DefaultNamespace, "c"))
	e, err = s.BatchQueueEntryByJob(nil, structs.DefaultNamespace, "c")
	must.NoError(t, err)
	must.Nil(t, e)
	got, err := s.EvalByID(nil, cEval.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusCancelled, got.Status)
	stats, err = s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Released: 1, Enqueued: 2, Removed: 1}, stats)

	// Placed: the entry leaves without counting as removed.
	_, err = s.BatchQueueApply(10, &structs.BatchQueueReleaseRequest{Done: rel})
	must.NoError(t, err)
	stats, err = s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Enqueued: 2, Removed: 1}, stats)
}

// TestBatchQueue_Feed hands each committed write's new rows to the feed,
// and only new rows: a replacement or a removal is seen through the
// table's watch.
func TestBatchQueue_Feed(t *testing.T) {
	s := queueOnStore(t)
	var fed [][]string
	s.SetBatchQueueFeed(func(rows []*structs.BatchQueueEntry) {
		var ids []string
		for _, e := range rows {
			ids = append(ids, e.JobID)
		}
		fed = append(fed, ids)
	})
	for i, id := range []string{"z", "b", "y"} {
		j := mockBatchJob(id)
		must.NoError(t, s.UpsertJobWithEval(uint64(300+i*100), j, mockEval(j, structs.EvalStatusPending)))
	}
	must.Eq(t, [][]string{{"z"}, {"b"}, {"y"}}, fed)

	ws := memdb.NewWatchSet()
	idx, err := s.BatchQueueTableIndex(ws)
	must.NoError(t, err)
	must.Eq(t, 500, idx)
	j := mockBatchJob("b")
	j.Priority = 80
	must.NoError(t, s.UpsertJobWithEval(600, j, mockEval(j, structs.EvalStatusPending))) // replaces b's eval
	must.Len(t, 3, fed)
	must.True(t, WatchFired(ws))

	must.NoError(t, s.DeleteJob(700, structs.DefaultNamespace, "y"))
	stats, err := s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Queued: 2, Enqueued: 3, Removed: 1}, stats)
}

// Re-registering a queued batch job as another type takes it out of the
// queue and cancels the held eval in the same write.
func TestBatchQueue_TypeChangeLeavesQueue(t *testing.T) {
	s := queueOnStore(t)
	job := mockBatchJob("a")
	held := mockEval(job, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(2, job, held))
	must.True(t, s.BatchQueueHoldsEval(held))

	svc := mockJob("a")
	svcEval := mockEval(svc, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(3, svc, svcEval))
	e, err := s.BatchQueueEntryByJob(nil, structs.DefaultNamespace, "a")
	must.NoError(t, err)
	must.Nil(t, e)
	got, err := s.EvalByID(nil, held.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusCancelled, got.Status)
	must.False(t, s.BatchQueueHoldsEval(svcEval))
	stats, err := s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Enqueued: 1, Removed: 1}, stats)
}
