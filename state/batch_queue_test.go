package state

import (
	"testing"

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

func TestBatchQueue_RoutingAndSameEntryCancels(t *testing.T) {
	s := testStore(t)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	must.NoError(t, s.SchedulerSetConfig(1, cfg))

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
	ev, err := s.BatchQueueRelease(4, &structs.BatchQueueReleaseRequest{Namespace: "default", JobID: "a", EvalID: second.ID, ReleaseTime: 1})
	must.NoError(t, err)
	must.NotNil(t, ev)
	ev, err = s.BatchQueueRelease(5, &structs.BatchQueueReleaseRequest{Namespace: "default", JobID: "a", EvalID: second.ID, ReleaseTime: 2})
	must.NoError(t, err)
	must.Nil(t, ev)
	must.False(t, s.BatchQueueHoldsEval(second))

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
}
