package batchqueue

import (
	"errors"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// facts is a fixed answer to every routing question; asked records which
// were asked, so a test sees that cheap checks come first.
type facts struct {
	enabled bool
	job     *structs.Job
	entry   *structs.BatchQueueEntry
	live    bool
	err     error

	asked []string
}

func (f *facts) Enabled() (bool, error) {
	f.asked = append(f.asked, "enabled")
	return f.enabled, f.err
}
func (f *facts) Job() (*structs.Job, error) {
	f.asked = append(f.asked, "job")
	return f.job, nil
}
func (f *facts) Entry() (*structs.BatchQueueEntry, error) {
	f.asked = append(f.asked, "entry")
	return f.entry, nil
}
func (f *facts) LiveAlloc() (bool, error) { f.asked = append(f.asked, "allocs"); return f.live, nil }

func registerEval(job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{ID: "ev-new", Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending}
}

func TestRoute(t *testing.T) {
	job := batchJob("a", 50, 1)
	stopped := job.Copy()
	stopped.Stop = true
	queued := &structs.BatchQueueEntry{Namespace: "default", JobID: "a", EvalID: "ev-old", EnqueueIndex: 3}
	released := queued.Copy()
	released.Release = &structs.BatchQueueRelease{Index: 5, Time: 1}
	holding := queued.Copy()
	holding.EvalID = "ev-new"
	with := func(fn func(*structs.Evaluation)) *structs.Evaluation {
		ev := registerEval(job)
		fn(ev)
		return ev
	}
	cases := []struct {
		name  string
		eval  *structs.Evaluation
		facts facts
		want  state.BatchQueueRouting
		asked []string
	}{
		{"new job enters", registerEval(job), facts{enabled: true, job: job},
			state.BatchQueueEnqueue, []string{"enabled", "job", "entry", "allocs"}},
		{"queue off", registerEval(job), facts{job: job},
			state.BatchQueuePass, []string{"enabled"}},
		{"not pending", with(func(e *structs.Evaluation) { e.Status = structs.EvalStatusBlocked }), facts{enabled: true, job: job},
			state.BatchQueuePass, nil},
		{"service eval", with(func(e *structs.Evaluation) { e.Type = structs.JobTypeService }), facts{enabled: true, job: job},
			state.BatchQueuePass, nil},
		{"sysbatch eval", with(func(e *structs.Evaluation) { e.Type = structs.JobTypeSysBatch }), facts{enabled: true, job: job},
			state.BatchQueuePass, nil},
		{"node update", with(func(e *structs.Evaluation) { e.TriggeredBy = structs.EvalTriggerNodeUpdate }), facts{enabled: true, job: job},
			state.BatchQueuePass, nil},
		{"queued-allocs follow-up", with(func(e *structs.Evaluation) { e.TriggeredBy = structs.EvalTriggerQueuedAllocs }), facts{enabled: true, job: job},
			state.BatchQueuePass, nil},
		{"job purged", registerEval(job), facts{enabled: true},
			state.BatchQueuePass, []string{"enabled", "job"}},
		{"job stopped", registerEval(job), facts{enabled: true, job: stopped},
			state.BatchQueuePass, []string{"enabled", "job"}},
		{"still queued: replaces the held eval", registerEval(job), facts{enabled: true, job: job, entry: queued},
			state.BatchQueueReplace, []string{"enabled", "job", "entry"}},
		{"already holds this eval", registerEval(job), facts{enabled: true, job: job, entry: holding},
			state.BatchQueuePass, []string{"enabled", "job", "entry"}},
		{"released: placing or running", registerEval(job), facts{enabled: true, job: job, entry: released},
			state.BatchQueuePass, []string{"enabled", "job", "entry"}},
		{"live alloc: a max_run_duration extension", registerEval(job), facts{enabled: true, job: job, live: true},
			state.BatchQueuePass, []string{"enabled", "job", "entry", "allocs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Route(tc.eval, &tc.facts)
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
			must.Eq(t, tc.asked, tc.facts.asked)
		})
	}
	t.Run("read error", func(t *testing.T) {
		f := &facts{err: errors.New("boom")}
		_, err := Route(registerEval(job), f)
		must.ErrorContains(t, err, "boom")
	})
}

// routedStore is a store with the queue on and the routing rule wired,
// as the FSM builds it.
func routedStore(t *testing.T) *state.StateStore {
	t.Helper()
	s, err := state.NewStateStore()
	must.NoError(t, err)
	s.SetBatchQueueRouter(Route)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	_, err = s.SchedulerSetConfig(1, cfg)
	must.NoError(t, err)
	return s
}

func pendingEval(job *structs.Job) *structs.Evaluation {
	ev := registerEval(job)
	ev.ID = structs.GenerateUUID()
	ev.CreateTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	return ev
}

// The store applies the rule's decisions in the write that stores the
// eval: a new entry, a replacement that keeps the sort key and cancels
// the old eval, a release applied once, a bypass, a purge.
func TestRoute_AppliedByTheStore(t *testing.T) {
	s := routedStore(t)
	holds := func(ev *structs.Evaluation) bool { return s.BatchQueueHoldsEval(ev) }

	job := batchJob("a", 50, 1)
	first := pendingEval(job)
	must.NoError(t, s.UpsertJobWithEval(2, job, first))
	must.True(t, holds(first))

	// Re-register: same sort key, old eval canceled in the same write.
	changed := batchJob("a", 70, 1)
	second := pendingEval(changed)
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
	must.False(t, holds(second))
	stats, err := s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, state.BatchQueueStats{ID: state.TableBatchQueue, Released: 1, Enqueued: 1}, stats)

	// Non-register evals and service jobs bypass the queue.
	svc := batchJob("svc", 50, 1)
	svc.Type = structs.JobTypeService
	svcEval := pendingEval(svc)
	must.NoError(t, s.UpsertJobWithEval(6, svc, svcEval))
	must.False(t, holds(svcEval))
	b := batchJob("b", 50, 1)
	bEval := pendingEval(b)
	bEval.TriggeredBy = structs.EvalTriggerNodeUpdate
	must.NoError(t, s.UpsertJobWithEval(7, b, bEval))
	must.False(t, holds(bEval))

	// Purging a queued job removes the entry and cancels its eval.
	c := batchJob("c", 50, 1)
	cEval := pendingEval(c)
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
	must.Eq(t, state.BatchQueueStats{ID: state.TableBatchQueue, Released: 1, Enqueued: 2, Removed: 1}, stats)

	// Placed: the entry leaves without counting as removed.
	_, err = s.BatchQueueApply(10, &structs.BatchQueueReleaseRequest{Done: rel})
	must.NoError(t, err)
	stats, err = s.BatchQueueStats(nil)
	must.NoError(t, err)
	must.Eq(t, state.BatchQueueStats{ID: state.TableBatchQueue, Enqueued: 2, Removed: 1}, stats)
}
