package state

import (
	"errors"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// routeBatch stands in for the queue's routing rule (batchqueue.Route,
// which imports this package and is tested there): a pending batch eval
// of a job with no entry enters the queue, and one of a queued job
// replaces the eval it holds. It lets these tests check the store's half,
// applying a decision in the write that stores the eval.
func routeBatch(eval *structs.Evaluation, facts BatchQueueFacts) (BatchQueueRouting, error) {
	if eval.Status != structs.EvalStatusPending || eval.Type != structs.JobTypeBatch {
		return BatchQueuePass, nil
	}
	entry, err := facts.Entry()
	switch {
	case err != nil:
		return BatchQueuePass, err
	case entry == nil:
		return BatchQueueEnqueue, nil
	case !entry.Released():
		return BatchQueueReplace, nil
	}
	return BatchQueuePass, nil
}

// populateBatchQueue queues a batch job; populate enabled the queue. It
// writes at populate's last index so index expectations stay.
func populateBatchQueue(t testing.TB, s *StateStore) {
	t.Helper()
	s.SetBatchQueueRouter(routeBatch)
	queued := mockBatchJob("queued")
	must.NoError(t, s.UpsertJobWithEval(9, queued, mockEval(queued, structs.EvalStatusPending)))
	must.NoError(t, s.BatchQueueControl(10, &structs.BatchQueueControlRequest{JobID: queued.ID, Op: structs.BatchQueueHold,
		WriteRequest: structs.WriteRequest{Namespace: queued.Namespace}}))
	must.NoError(t, s.BatchQueueUsageReset(10, &structs.BatchQueueUsageResetRequest{Time: 5,
		WriteRequest: structs.WriteRequest{Namespace: queued.Namespace}}))
}

// queueOnStore is a store with the batch queue switched on at index 1.
func queueOnStore(t *testing.T) *StateStore {
	t.Helper()
	s := testStore(t)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	_, err := s.SchedulerSetConfig(1, cfg)
	must.NoError(t, err)
	s.SetBatchQueueRouter(routeBatch)
	return s
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

// Switching the queue off empties the table in the configuration's own
// write and hands back the evals that were still queued; a write that
// fails halfway leaves the configuration and the table as they were.
func TestBatchQueue_SwitchOffDrainsInOneWrite(t *testing.T) {
	queued := func(t *testing.T) (*StateStore, *structs.Evaluation) {
		s := queueOnStore(t)
		a, b := mockBatchJob("a"), mockBatchJob("b")
		aEval, bEval := mockEval(a, structs.EvalStatusPending), mockEval(b, structs.EvalStatusPending)
		must.NoError(t, s.UpsertJobWithEval(2, a, aEval))
		must.NoError(t, s.UpsertJobWithEval(3, b, bEval))
		rel := []structs.BatchQueueRef{{Namespace: structs.DefaultNamespace, JobID: "a", EvalID: aEval.ID}}
		_, err := s.BatchQueueApply(4, &structs.BatchQueueReleaseRequest{Release: rel, ReleaseTime: 1})
		must.NoError(t, err)
		return s, bEval
	}
	off := func() *structs.SchedulerConfiguration {
		cfg := structs.DefaultSchedulerConfiguration()
		cfg.BatchQueue.Enabled = false
		return cfg
	}
	cases := []struct {
		name  string
		write func(s *StateStore) ([]*structs.Evaluation, error)
	}{
		{"set", func(s *StateStore) ([]*structs.Evaluation, error) { return s.SchedulerSetConfig(5, off()) }},
		{"cas", func(s *StateStore) ([]*structs.Evaluation, error) {
			ok, evals, err := s.SchedulerCASConfig(5, 1, off())
			if err == nil && !ok {
				err = errors.New("check-and-set refused")
			}
			return evals, err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, held := queued(t)
			evals, err := tc.write(s)
			must.NoError(t, err)
			must.Len(t, 1, evals) // the released one is with the broker already
			must.Eq(t, held.ID, evals[0].ID)
			rows, err := s.BatchQueueEntries(nil)
			must.NoError(t, err)
			must.SliceEmpty(t, rows)
			stats, err := s.BatchQueueStats(nil)
			must.NoError(t, err)
			must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Enqueued: 2, Removed: 2}, stats)
			idx, err := s.BatchQueueTableIndex(nil)
			must.NoError(t, err)
			must.Eq(t, 5, idx)
		})
		t.Run(tc.name+" fails halfway", func(t *testing.T) {
			s, _ := queued(t)
			before := indexTable(t, s)
			testHookDrainBatchQueue = func() error { return errors.New("disk on fire") }
			defer func() { testHookDrainBatchQueue = nil }()
			_, err := tc.write(s)
			must.ErrorContains(t, err, "disk on fire")
			idx, cfg, err := s.SchedulerConfig()
			must.NoError(t, err)
			must.Eq(t, 1, idx)
			must.True(t, cfg.BatchQueue.Enabled)
			rows, err := s.BatchQueueEntries(nil)
			must.NoError(t, err)
			must.Len(t, 2, rows)
			stats, err := s.BatchQueueStats(nil)
			must.NoError(t, err)
			must.Eq(t, BatchQueueStats{ID: TableBatchQueue, Queued: 1, Released: 1, Enqueued: 2}, stats)
			must.Eq(t, before, indexTable(t, s))
		})
	}
}
