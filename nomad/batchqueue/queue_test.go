package batchqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// harness is a state store with the queue running on it; its Committer
// applies releases and removals directly, as the FSM would, and records
// the jobs whose evals reached the "broker" in order.
type harness struct {
	t  *testing.T
	st *state.StateStore
	q  *Queue

	mu       sync.Mutex
	index    uint64
	released []string
	evals    map[string]string // job ID -> current eval ID
	cancel   context.CancelFunc

	// beforeCommit, when set, runs before a round's decisions apply: a
	// write racing the leader's commit.
	beforeCommit func()
	// failAfterApply makes the next commit apply and still report an
	// error, as a Raft apply that timed out and then committed does.
	failAfterApply bool
}

func newHarness(t *testing.T, cfg structs.BatchQueueConfig, m ...*metrics.Metrics) *harness {
	h := newIdleHarness(t, cfg, m...)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.q.Run(ctx)
	synctest.Wait() // the first round has seen the empty queue
	return h
}

// newIdleHarness is a harness whose queue does not run: a test drives
// its rounds.
func newIdleHarness(t *testing.T, cfg structs.BatchQueueConfig, m ...*metrics.Metrics) *harness {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	h := &harness{t: t, st: st, evals: make(map[string]string)}
	st.SetBatchQueueRouter(Route) // as the FSM does
	h.setConfig(cfg)
	h.q = New(Config{State: func() *state.StateStore { return st }, Commit: h})
	st.SetBatchQueueFeed(h.q.Feed) // as the FSM does
	if len(m) > 0 {
		h.q.cfg.Metrics = m[0]
	}
	return h
}

// stop ends the queue; synctest fails the test if any goroutine leaks.
func (h *harness) stop() {
	h.cancel()
	synctest.Wait()
}

func (h *harness) write(fn func(index uint64) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.index++
	must.NoError(h.t, fn(h.index))
}

func (h *harness) Commit(req *structs.BatchQueueReleaseRequest) error {
	if h.beforeCommit != nil {
		h.beforeCommit()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.index++
	evals, err := h.st.BatchQueueApply(h.index, req)
	for _, ev := range evals {
		h.released = append(h.released, ev.JobID)
	}
	if err == nil && h.failAfterApply {
		h.failAfterApply = false
		return errors.New("raft apply timed out")
	}
	return err
}

func (h *harness) releasedJobs() []string {
	synctest.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.released...)
}

// setConfig writes the queue settings and returns the evals that a
// switch-off released from the queue.
func (h *harness) setConfig(bq structs.BatchQueueConfig) []*structs.Evaluation {
	bq.Canonicalize()
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue = bq
	var evals []*structs.Evaluation
	h.write(func(i uint64) error {
		var err error
		evals, err = h.st.SchedulerSetConfig(i, cfg)
		return err
	})
	return evals
}

func batchJob(id string, prio, count int) *structs.Job {
	return &structs.Job{
		Region: structs.DefaultRegion, Namespace: structs.DefaultNamespace,
		ID: id, Name: id, Type: structs.JobTypeBatch, Priority: prio,
		Datacenters: []string{"dc1"}, NodePool: structs.DefaultNodePool,
		TaskGroups: []*structs.TaskGroup{{
			Name: "g", Count: count,
			Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"},
				Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}},
		}},
	}
}

// register writes a job with its job-register eval in one entry, as the
// Job.Register endpoint does.
func (h *harness) register(job *structs.Job) string {
	now := time.Now().UnixNano()
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending,
		CreateTime: now, ModifyTime: now,
	}
	h.write(func(i uint64) error { return h.st.UpsertJobWithEval(i, job, eval) })
	h.mu.Lock()
	h.evals[job.ID] = eval.ID
	h.mu.Unlock()
	return eval.ID
}

// registerAll registers one-alloc batch jobs of priority 50, in order.
func (h *harness) registerAll(ids ...string) {
	for _, id := range ids {
		h.register(batchJob(id, 50, 1))
	}
}

// place writes n allocs of the job's current version, named from first.
func (h *harness) place(id string, first, n int) {
	job, err := h.st.JobByID(nil, structs.DefaultNamespace, id)
	must.NoError(h.t, err)
	var allocs []*structs.Allocation
	for i := first; i < first+n; i++ {
		allocs = append(allocs, &structs.Allocation{
			ID: structs.GenerateUUID(), Namespace: job.Namespace, JobID: id, Job: job, TaskGroup: "g",
			Name: fmt.Sprintf("%s.g[%d]", id, i), NodeID: structs.GenerateUUID(), EvalID: h.evals[id],
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
			CreateTime: time.Now().UnixNano(),
		})
	}
	h.write(func(i uint64) error { return h.st.UpsertAllocs(i, allocs) })
}

// infeasible writes the scheduler's verdict: the job's group fits no node.
func (h *harness) infeasible(id string) {
	h.evalDone(id, map[string]*structs.AllocMetric{"g": {Infeasible: true, InfeasibleReason: "missing drivers"}})
}

// evalDone writes a completed eval of the job with the scheduler's
// failures (nil: everything it wanted was placed).
func (h *harness) evalDone(id string, failed map[string]*structs.AllocMetric) {
	now := time.Now().UnixNano()
	ev := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: structs.DefaultNamespace, Priority: 50, Type: structs.JobTypeBatch,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: id, Status: structs.EvalStatusComplete,
		FailedTGAllocs: failed, CreateTime: now, ModifyTime: now,
	}
	h.write(func(i uint64) error { return h.st.UpsertEvals(i, []*structs.Evaluation{ev}) })
}

func (h *harness) stopJob(id string) {
	job, err := h.st.JobByID(nil, structs.DefaultNamespace, id)
	must.NoError(h.t, err)
	c := job.Copy()
	c.Stop = true
	h.write(func(i uint64) error { return h.st.UpsertJob(i, c) })
}

// status is a job's status in the listing and its reason's words.
func (h *harness) status(id string) (string, string) {
	synctest.Wait()
	for _, e := range h.q.List() {
		if e.JobID == id {
			return e.Status, e.ReasonDetail
		}
	}
	return "", ""
}

// holds reports whether the eval waits in the queue.
func (h *harness) holds(evalID string) bool {
	ev, err := h.st.EvalByID(nil, evalID)
	must.NoError(h.t, err)
	return h.st.BatchQueueHoldsEval(ev)
}

func (h *harness) evalStatus(evalID string) string {
	ev, err := h.st.EvalByID(nil, evalID)
	must.NoError(h.t, err)
	return ev.Status
}

func cfg(order string, n int, timeout time.Duration) structs.BatchQueueConfig {
	return structs.BatchQueueConfig{Enabled: true, Order: order, ConcurrentPlacements: n, WorkloadTimeout: timeout}
}

func TestQueue_Order(t *testing.T) {
	cases := []struct {
		name  string
		order string
		jobs  []*structs.Job
		want  []string
	}{
		{"fifo ignores priority", structs.BatchQueueOrderFIFO,
			[]*structs.Job{batchJob("a", 10, 1), batchJob("b", 90, 1), batchJob("c", 50, 1)},
			[]string{"a", "b", "c"}},
		{"priority then fifo", structs.BatchQueueOrderPriority,
			[]*structs.Job{batchJob("low1", 10, 1), batchJob("low2", 10, 1), batchJob("high1", 90, 1), batchJob("high2", 90, 1)},
			[]string{"high1", "high2", "low1", "low2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, cfg(tc.order, 1, time.Minute))
				defer h.stop()
				// Hold the line with a first job so the rest queue up.
				h.register(batchJob("first", 50, 1))
				must.Eq(t, []string{"first"}, h.releasedJobs())
				for _, j := range tc.jobs {
					h.register(j)
				}
				synctest.Wait()
				var queued []string
				for _, e := range h.q.List() {
					if e.Status == structs.BatchQueueStatusQueued {
						must.Eq(t, len(queued)+1, e.Position)
						queued = append(queued, e.JobID)
					}
				}
				must.Eq(t, tc.want, queued)
				for i, id := range tc.want {
					le := h.q.Lookup(structs.DefaultNamespace, id)
					must.NotNil(t, le)
					must.Eq(t, i+1, le.Position)
				}
				must.Eq(t, structs.BatchQueueStatusPlacing, h.q.Lookup(structs.DefaultNamespace, "first").Status)
				must.Nil(t, h.q.Lookup(structs.DefaultNamespace, "nope"))
				// Page tokens sort like the listing, queued before released.
				entries, tokens := h.q.ListWithTokens()
				must.Eq(t, len(entries), len(tokens))
				must.True(t, slices.IsSorted(tokens), must.Sprintf("tokens out of order: %q", tokens))
				h.place("first", 0, 1)
				for _, id := range tc.want {
					got := h.releasedJobs()
					must.Eq(t, id, got[len(got)-1])
					h.place(id, 0, 1)
				}
				must.Eq(t, append([]string{"first"}, tc.want...), h.releasedJobs())
			})
		})
	}
}

func TestQueue_ConcurrencyLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 2, time.Minute))
		defer h.stop()
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			h.register(batchJob(id, 50, 2))
		}
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		h.place("a", 0, 1) // half placed: still placing
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		h.place("a", 1, 1)
		must.Eq(t, []string{"a", "b", "c"}, h.releasedJobs())
		st := h.q.Status()
		must.Eq(t, 2, st.Depth[structs.BatchQueueStatusPlacing])
		must.Eq(t, 2, st.Depth[structs.BatchQueueStatusQueued])
	})
}

func TestQueue_Constrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.registerAll("a", "b")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.infeasible("a")
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		s, reason := h.status("a")
		must.Eq(t, structs.BatchQueueStatusConstrained, s)
		must.StrContains(t, reason, "missing drivers")
		// Placed later, outside queue order: it leaves the queue.
		h.place("a", 0, 1)
		s, _ = h.status("a")
		must.Eq(t, "", s)
	})
}

func TestQueue_Stalled(t *testing.T) {
	t.Run("no progress", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Minute))
			defer h.stop()
			h.registerAll("a", "b")
			must.Eq(t, []string{"a"}, h.releasedJobs())
			time.Sleep(59 * time.Second)
			must.Eq(t, []string{"a"}, h.releasedJobs())
			s, _ := h.status("a")
			must.Eq(t, structs.BatchQueueStatusPlacing, s)
			time.Sleep(2 * time.Second)
			must.Eq(t, []string{"a", "b"}, h.releasedJobs())
			s, reason := h.status("a")
			must.Eq(t, structs.BatchQueueStatusStalled, s)
			must.StrContains(t, reason, "workload_timeout")
			h.place("a", 0, 1) // capacity freed: placed later
			s, _ = h.status("a")
			must.Eq(t, "", s)
		})
	})
	t.Run("progress moves the clock", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Minute))
			defer h.stop()
			h.register(batchJob("a", 50, 3))
			h.register(batchJob("b", 50, 1))
			must.Eq(t, []string{"a"}, h.releasedJobs())
			time.Sleep(50 * time.Second)
			h.place("a", 0, 1)
			time.Sleep(20 * time.Second) // 70s after release, 20s after progress
			must.Eq(t, []string{"a"}, h.releasedJobs())
			time.Sleep(41 * time.Second)
			must.Eq(t, []string{"a", "b"}, h.releasedJobs())
			s, _ := h.status("a")
			must.Eq(t, structs.BatchQueueStatusStalled, s)
		})
	})
}

func TestQueue_Reregister(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.register(batchJob("a", 50, 1))
		oldB := h.register(batchJob("b", 50, 1))
		h.register(batchJob("c", 50, 1))
		must.Eq(t, []string{"a"}, h.releasedJobs())
		before, err := h.st.BatchQueueEntryByJob(nil, structs.DefaultNamespace, "b")
		must.NoError(t, err)

		synctest.Wait()
		idx0, _ := h.q.Index()
		newB := h.register(batchJob("b", 50, 2)) // a new version while queued
		synctest.Wait()
		idx1, _ := h.q.Index()
		must.Greater(t, idx0, idx1) // blocking readers see the new eval
		for _, le := range h.q.List() {
			if le.JobID == "b" {
				must.Eq(t, newB, le.EvalID)
				must.Eq(t, 1, le.Position)
			}
		}
		after, err := h.st.BatchQueueEntryByJob(nil, structs.DefaultNamespace, "b")
		must.NoError(t, err)
		must.Eq(t, before.EnqueueIndex, after.EnqueueIndex)
		must.Eq(t, newB, after.EvalID)
		must.Eq(t, structs.EvalStatusCancelled, h.evalStatus(oldB))

		h.place("a", 0, 1)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		// Re-registering the still queued c with a new version keeps its
		// place; b was released, so a new version of b is done with the
		// queue and its live alloc sends the new eval to the broker.
		h.place("b", 0, 1)
		ev := h.register(batchJob("b", 50, 3))
		must.False(t, h.holds(ev))
		s, _ := h.status("b")
		must.Eq(t, "", s)
	})
}

func TestQueue_Stop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.register(batchJob("a", 50, 1))
		evB := h.register(batchJob("b", 50, 1))
		h.registerAll("c", "d")
		must.Eq(t, []string{"a"}, h.releasedJobs())

		h.stopJob("b") // while queued
		must.Eq(t, structs.EvalStatusCancelled, h.evalStatus(evB))
		s, _ := h.status("b")
		must.Eq(t, "", s)

		h.stopJob("a") // while placing: frees the slot
		must.Eq(t, []string{"a", "c"}, h.releasedJobs())

		h.write(func(i uint64) error { return h.st.DeleteJob(i, structs.DefaultNamespace, "d") }) // purge
		s, _ = h.status("d")
		must.Eq(t, "", s)
		must.Eq(t, 1, len(h.q.List()))
	})
}

func TestQueue_ConfigChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.register(batchJob("a", 50, 1))
		h.register(batchJob("low", 10, 1))
		h.register(batchJob("high", 90, 1))
		synctest.Wait()
		idx, _ := h.q.Index()

		// An unrelated change of the scheduler configuration does not
		// rebuild the queue: the listing index stays.
		c := structs.DefaultSchedulerConfiguration()
		c.SchedulerAlgorithm = structs.SchedulerAlgorithmSpread
		c.BatchQueue = cfg(structs.BatchQueueOrderFIFO, 1, time.Hour)
		h.write(func(i uint64) error { _, err := h.st.SchedulerSetConfig(i, c); return err })
		synctest.Wait()
		idx2, _ := h.q.Index()
		must.Eq(t, idx, idx2)

		h.setConfig(cfg(structs.BatchQueueOrderPriority, 1, time.Hour))
		synctest.Wait()
		idx3, _ := h.q.Index()
		must.Greater(t, idx2, idx3)
		list := h.q.List()
		must.Eq(t, "high", list[0].JobID)
		must.Eq(t, "low", list[1].JobID)

		h.setConfig(cfg(structs.BatchQueueOrderPriority, 3, time.Hour))
		must.Eq(t, []string{"a", "high", "low"}, h.releasedJobs())
	})
}

func TestQueue_DisableReleasesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		for _, id := range []string{"a", "b", "c"} {
			h.register(batchJob(id, 50, 1))
		}
		must.Eq(t, []string{"a"}, h.releasedJobs())
		off := cfg(structs.BatchQueueOrderFIFO, 1, time.Hour)
		off.Enabled = false
		// The write that disables the queue drains the table.
		evals := h.setConfig(off)
		var ids []string
		for _, e := range evals {
			ids = append(ids, e.JobID)
		}
		must.SliceContainsAll(t, []string{"b", "c"}, ids)
		synctest.Wait()
		must.SliceEmpty(t, h.q.List())
		// With the queue off, new evals bypass it.
		h.register(batchJob("d", 50, 1))
		must.False(t, h.holds(h.evals["d"]))
	})
}

func TestQueue_LiveAllocBypasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.registerAll("a", "b")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.place("a", 0, 1)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		// a now runs: a re-register (e.g. a raised max_run_duration) is
		// not held back.
		j := batchJob("a", 50, 1)
		d := time.Hour
		j.TaskGroups[0].MaxRunDuration = &d
		ev := h.register(j)
		must.False(t, h.holds(ev))
	})
}

// A re-register that lands between the leader's decision and its commit
// makes the FSM skip the release (the entry holds another eval now); the
// queue puts the job back at its place and releases the new eval.
func TestQueue_ReleaseRacesReregister(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.register(batchJob("a", 50, 1))
		oldB := h.register(batchJob("b", 50, 1))
		h.register(batchJob("c", 50, 1))
		must.Eq(t, []string{"a"}, h.releasedJobs())

		var newB string
		h.beforeCommit = func() {
			h.beforeCommit = nil
			newB = h.register(batchJob("b", 50, 2))
		}
		h.place("a", 0, 1)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		e, err := h.st.BatchQueueEntryByJob(nil, structs.DefaultNamespace, "b")
		must.NoError(t, err)
		must.True(t, e.Released())
		must.Eq(t, newB, e.EvalID)
		must.Eq(t, structs.EvalStatusCancelled, h.evalStatus(oldB))
		s, _ := h.status("c")
		must.Eq(t, structs.BatchQueueStatusQueued, s)
	})
}

// A stalled workload stays stalled when capacity later frees for a part
// of it: it does not take a slot back from the line.
func TestQueue_StalledIsSticky(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Minute))
		defer h.stop()
		h.register(batchJob("a", 50, 3))
		h.registerAll("b", "c")
		time.Sleep(61 * time.Second)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		h.place("a", 0, 1) // one of three, after the stall
		s, _ := h.status("a")
		must.Eq(t, structs.BatchQueueStatusStalled, s)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs()) // b keeps the slot
		h.place("b", 0, 1)
		must.Eq(t, []string{"a", "b", "c"}, h.releasedJobs())
		h.place("a", 1, 2)
		s, _ = h.status("a")
		must.Eq(t, "", s) // placed, outside the slots
	})
}

// A commit that reports an error but applied leaves a released entry the
// queue did not record; it is found at the top of the heap and watched,
// and it keeps its slot.
func TestQueue_CommitErrorAfterApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		for _, id := range []string{"a", "b", "c"} {
			h.register(batchJob(id, 50, 1))
		}
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.mu.Lock()
		h.failAfterApply = true
		h.mu.Unlock()
		h.place("a", 0, 1)
		time.Sleep(5 * time.Second) // past the retry
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		s, _ := h.status("b")
		must.Eq(t, structs.BatchQueueStatusPlacing, s)
		s, _ = h.status("c")
		must.Eq(t, structs.BatchQueueStatusQueued, s)
		h.place("b", 0, 1)
		must.Eq(t, []string{"a", "b", "c"}, h.releasedJobs())
	})
}

// A released job the scheduler has nothing to place for (a re-run of a
// finished batch job: its allocs completed before) is placed as soon as
// its eval completes without failures.
func TestQueue_NothingToPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.registerAll("a", "b")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.evalDone("a", nil)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		s, _ := h.status("a")
		must.Eq(t, "", s)
	})
}

// A replacement of an already placed alloc is not progress: it does not
// move the stall clock.
func TestQueue_ReplacementsDoNotMoveStallClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Minute))
		defer h.stop()
		h.register(batchJob("a", 50, 2))
		h.register(batchJob("b", 50, 1))
		must.Eq(t, []string{"a"}, h.releasedJobs())
		time.Sleep(10 * time.Second)
		h.place("a", 0, 1)
		time.Sleep(40 * time.Second)
		h.place("a", 0, 1) // a replacement of a.g[0]
		time.Sleep(21 * time.Second)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		s, _ := h.status("a")
		must.Eq(t, structs.BatchQueueStatusStalled, s)
	})
}

// Once constrained, a workload keeps no slot, even when a later eval
// fails only for want of capacity.
func TestQueue_ConstrainedIsSticky(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.register(batchJob("a", 50, 2))
		h.registerAll("b", "c")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.infeasible("a")
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		h.place("a", 0, 1) // a node with the driver joined; one fits
		h.evalDone("a", map[string]*structs.AllocMetric{"g": {NodesExhausted: 1}})
		s, reason := h.status("a")
		must.Eq(t, structs.BatchQueueStatusConstrained, s)
		must.StrContains(t, reason, "missing drivers")
		must.Eq(t, 1, h.q.Status().Depth[structs.BatchQueueStatusPlacing])
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
	})
}
