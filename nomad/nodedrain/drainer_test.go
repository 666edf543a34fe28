package nodedrain

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// drainFixture is a state store with two ready nodes; the first drains.
type drainFixture struct {
	st       *state.StateStore
	draining *structs.Node
	other    *structs.Node
}

func newDrainFixture(t *testing.T, drain *structs.DrainStrategy) *drainFixture {
	t.Helper()
	st, err := state.NewStateStore()
	must.NoError(t, err)
	fx := &drainFixture{st: st, draining: mock.Node(structs.GenerateUUID()), other: mock.Node(structs.GenerateUUID())}
	must.NoError(t, st.UpsertNode(fx.next(t), fx.draining))
	must.NoError(t, st.UpsertNode(fx.next(t), fx.other))
	if drain != nil {
		must.NoError(t, st.UpdateNodeDrain(fx.next(t), fx.draining.ID, drain, false, time.Now().Unix(), nil, nil))
	}
	return fx
}

func (fx *drainFixture) next(t *testing.T) uint64 {
	t.Helper()
	i, err := fx.st.LatestIndex()
	must.NoError(t, err)
	return i + 1
}

// job stores a job of the given type with one group "work" of count and
// the given migrate max_parallel.
func (fx *drainFixture) job(t *testing.T, id, typ string, count, maxParallel int) *structs.Job {
	t.Helper()
	job := mock.Job(id)
	job.Type = typ
	tg := job.TaskGroups[0]
	tg.Count = count
	if typ != structs.JobTypeBatch {
		tg.MaxRunDuration = nil
	}
	job.Canonicalize()
	if tg.Migrate != nil {
		tg.Migrate.MaxParallel = maxParallel
	}
	must.NoError(t, fx.st.UpsertJob(fx.next(t), job))
	stored, err := fx.st.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	return stored
}

// running places a running allocation of job at index on node, its task
// started at started.
func (fx *drainFixture) running(t *testing.T, job *structs.Job, node *structs.Node, index uint, started time.Time) *structs.Allocation {
	t.Helper()
	a := mock.Alloc(job, node, "")
	a.Name = structs.AllocName(job.ID, "work", index)
	must.NoError(t, fx.st.UpsertAllocs(fx.next(t), []*structs.Allocation{a}))
	u := a.Copy()
	u.ClientStatus = structs.AllocClientStatusRunning
	u.TaskStates = map[string]*structs.TaskState{"main": {State: structs.TaskStateRunning, StartedAt: started}}
	must.NoError(t, fx.st.UpdateAllocsFromClient(fx.next(t), []*structs.Allocation{u}))
	return a
}

func (fx *drainFixture) finish(t *testing.T, a *structs.Allocation) {
	t.Helper()
	u := a.Copy()
	u.ClientStatus = structs.AllocClientStatusComplete
	must.NoError(t, fx.st.UpdateAllocsFromClient(fx.next(t), []*structs.Allocation{u}))
}

func (fx *drainFixture) MarkMigrate(req *structs.AllocUpdateDesiredTransitionRequest) error {
	i, _ := fx.st.LatestIndex()
	return fx.st.UpdateAllocsDesiredTransitions(i+1, req.Allocs, req.Evals)
}

func (fx *drainFixture) CompleteDrains(req *structs.BatchNodeUpdateDrainRequest) error {
	i, _ := fx.st.LatestIndex()
	return fx.st.CompleteNodeDrains(i+1, req.Updates, req.NodeEvents, req.UpdatedAt)
}

func (fx *drainFixture) alloc(t *testing.T, id string) *structs.Allocation {
	t.Helper()
	a, err := fx.st.AllocByID(nil, id)
	must.NoError(t, err)
	return a
}

func (fx *drainFixture) node(t *testing.T, id string) *structs.Node {
	t.Helper()
	n, err := fx.st.NodeByID(nil, id)
	must.NoError(t, err)
	return n
}

func allocIDs(as []*structs.Allocation) []string {
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	return ids
}

// The drainer sleeps until the deadline that state holds, in fake time:
// before it the batch allocation runs on; at it the allocation is marked
// for migration (with an eval for its job) and the drain completes,
// leaving the node ineligible.
func TestNodeDrainer_DeadlineStopsBatchWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fx := newDrainFixture(t, &structs.DrainStrategy{
			DrainSpec: structs.DrainSpec{Deadline: 5 * time.Second}, StartedAt: start, ForceDeadline: start.Add(5 * time.Second),
		})
		job := fx.job(t, "batch", structs.JobTypeBatch, 1, 0)
		a := fx.running(t, job, fx.draining, 0, start)

		ctx, cancel := context.WithCancel(t.Context())
		d := New(hclog.NewNullLogger(), func() *state.StateStore { return fx.st }, fx, time.Now)
		done := make(chan struct{})
		go func() { defer close(done); d.Run(ctx) }()

		synctest.Wait()
		must.False(t, fx.alloc(t, a.ID).DesiredTransition.ShouldMigrate())
		must.NotNil(t, fx.node(t, fx.draining.ID).DrainStrategy)

		time.Sleep(5*time.Second - time.Nanosecond)
		synctest.Wait()
		must.False(t, fx.alloc(t, a.ID).DesiredTransition.ShouldMigrate(), must.Sprint("nothing moves before the deadline"))

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		must.True(t, fx.alloc(t, a.ID).DesiredTransition.ShouldMigrate())
		evals, err := fx.st.EvalsByJob(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.Len(t, 1, evals)
		must.Eq(t, structs.EvalTriggerNodeDrain, evals[0].TriggeredBy)
		n := fx.node(t, fx.draining.ID)
		must.Nil(t, n.DrainStrategy)
		must.Eq(t, structs.NodeSchedulingIneligible, n.SchedulingEligibility)
		must.Eq(t, structs.DrainStatusComplete, n.LastDrain.Status)
		last := n.Events[len(n.Events)-1]
		must.Eq(t, structs.NodeEventDrainComplete, last.Message)
		must.Eq(t, "true", last.Details[structs.NodeEventDetailDeadlined])

		cancel()
		<-done
	})
}

// startDrainer runs a Drainer over fx (one leadership term) until the
// returned stop function is called.
func startDrainer(fx *drainFixture) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	d := New(hclog.NewNullLogger(), func() *state.StateStore { return fx.st }, fx, time.Now)
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	return func() {
		cancel()
		<-done
	}
}

// The deadline is the instant state holds, not a timer of the leader that
// set it: a drainer of a new leader enforces the same instant, and one
// that starts after it has passed completes the drain at once.
func TestNodeDrainer_DeadlineSurvivesLeaderChange(t *testing.T) {
	cases := []struct {
		name string
		// newLeader is when the second term starts, from the drain's
		// start; the first term ends at 2s.
		newLeader time.Duration
		// migrated is when the allocation is marked and the drain ends.
		migrated time.Duration
	}{
		{"new leader before the deadline", 3 * time.Second, 5 * time.Second},
		{"new leader after the deadline", 8 * time.Second, 8 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				fx := newDrainFixture(t, &structs.DrainStrategy{
					DrainSpec: structs.DrainSpec{Deadline: 5 * time.Second}, StartedAt: start, ForceDeadline: start.Add(5 * time.Second),
				})
				job := fx.job(t, "batch", structs.JobTypeBatch, 1, 0)
				a := fx.running(t, job, fx.draining, 0, start)

				stop := startDrainer(fx)
				time.Sleep(2 * time.Second)
				synctest.Wait()
				stop() // leadership lost

				time.Sleep(tc.newLeader - 2*time.Second)
				synctest.Wait()
				must.False(t, fx.alloc(t, a.ID).DesiredTransition.ShouldMigrate(), must.Sprint("nothing moves while no server leads"))
				must.NotNil(t, fx.node(t, fx.draining.ID).DrainStrategy)
				stop = startDrainer(fx)
				defer stop()

				if wait := tc.migrated - tc.newLeader; wait > 0 {
					time.Sleep(wait - time.Nanosecond)
					synctest.Wait()
					must.False(t, fx.alloc(t, a.ID).DesiredTransition.ShouldMigrate(), must.Sprint("nothing moves before the deadline"))
					time.Sleep(time.Nanosecond)
				}
				synctest.Wait()
				must.True(t, fx.alloc(t, a.ID).DesiredTransition.ShouldMigrate())
				n := fx.node(t, fx.draining.ID)
				must.Nil(t, n.DrainStrategy)
				last := n.Events[len(n.Events)-1]
				must.Eq(t, structs.NodeEventDrainComplete, last.Message)
				must.Eq(t, "true", last.Details[structs.NodeEventDetailDeadlined])
				must.Eq(t, tc.migrated, last.Timestamp.Sub(start))
			})
		})
	}
}

// A service group moves a slot at a time: the second allocation leaves
// only when the first one's replacement has run for min_healthy_time, and
// the drain completes, watched not polled, when the last allocation stops.
func TestNodeDrainer_ServiceMigratesPerMigrateBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fx := newDrainFixture(t, &structs.DrainStrategy{StartedAt: start})
		job := fx.job(t, "svc", structs.JobTypeService, 2, 1)
		first := fx.running(t, job, fx.draining, 0, start.Add(-time.Hour))
		second := fx.running(t, job, fx.draining, 1, start.Add(-time.Hour))
		if second.ID < first.ID {
			first, second = second, first
		}

		ctx, cancel := context.WithCancel(t.Context())
		d := New(hclog.NewNullLogger(), func() *state.StateStore { return fx.st }, fx, time.Now)
		done := make(chan struct{})
		go func() { defer close(done); d.Run(ctx) }()

		synctest.Wait()
		must.True(t, fx.alloc(t, first.ID).DesiredTransition.ShouldMigrate())
		must.False(t, fx.alloc(t, second.ID).DesiredTransition.ShouldMigrate())

		// The scheduler's part: the first stops, a replacement runs
		// elsewhere.
		fx.finish(t, fx.alloc(t, first.ID))
		fx.running(t, job, fx.other, 0, time.Now())
		synctest.Wait()
		must.False(t, fx.alloc(t, second.ID).DesiredTransition.ShouldMigrate(), must.Sprint("the replacement is not healthy yet"))

		time.Sleep(10 * time.Second) // the default min_healthy_time
		synctest.Wait()
		must.True(t, fx.alloc(t, second.ID).DesiredTransition.ShouldMigrate())
		must.NotNil(t, fx.node(t, fx.draining.ID).DrainStrategy)

		fx.finish(t, fx.alloc(t, second.ID))
		synctest.Wait()
		n := fx.node(t, fx.draining.ID)
		must.Nil(t, n.DrainStrategy)
		must.Eq(t, structs.DrainStatusComplete, n.LastDrain.Status)
		must.MapEmpty(t, n.Events[len(n.Events)-1].Details)

		cancel()
		<-done
	})
}
