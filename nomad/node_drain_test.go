package nomad

import (
	"bytes"
	"context"
	"io"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// The drain, its deadline included, lives in Raft: a snapshot taken while
// a node drains restores the same strategy, so a leader elected after a
// failover enforces the same instant.
func TestFSM_DrainSurvivesSnapshotRestore(t *testing.T) {
	f := testFSM(t)
	node := mockNode(structs.GenerateUUID())
	mustApply(t, f, 1, structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	started := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	drain := &structs.DrainStrategy{
		DrainSpec:     structs.DrainSpec{Deadline: 5 * time.Second, IgnoreSystemJobs: true},
		ForceDeadline: started.Add(5 * time.Second),
		StartedAt:     started,
	}
	mustApply(t, f, 2, structs.NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{
		NodeID: node.ID, DrainStrategy: drain, Meta: map[string]string{"reason": "kernel upgrade"}, UpdatedAt: started.Unix(),
		NodeEvent: &structs.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Message: structs.NodeEventDrainSet, Timestamp: started},
	})

	snap, err := f.Snapshot()
	must.NoError(t, err)
	var sink memSink
	must.NoError(t, snap.Persist(&sink))
	restored := testFSM(t)
	must.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

	got, err := restored.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.NotNil(t, got.DrainStrategy)
	must.True(t, got.DrainStrategy.ForceDeadline.Equal(drain.ForceDeadline))
	must.True(t, got.DrainStrategy.StartedAt.Equal(started))
	must.Eq(t, drain.DrainSpec, got.DrainStrategy.DrainSpec)
	must.Eq(t, structs.NodeSchedulingIneligible, got.SchedulingEligibility)
	must.NotNil(t, got.LastDrain)
	must.Eq(t, structs.DrainStatusDraining, got.LastDrain.Status)
	must.Eq(t, map[string]string{"reason": "kernel upgrade"}, got.LastDrain.Meta)
	must.Eq(t, structs.NodeEventDrainSet, got.Events[len(got.Events)-1].Message)
}

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
	fx := &drainFixture{st: st, draining: mockNode(structs.GenerateUUID()), other: mockNode(structs.GenerateUUID())}
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
	job := mockJob(id)
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
	a := mockAlloc(job, node, structs.GenerateUUID())
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

func (fx *drainFixture) markMigrate(req *structs.AllocUpdateDesiredTransitionRequest) error {
	i, _ := fx.st.LatestIndex()
	return fx.st.UpdateAllocsDesiredTransitions(i+1, req.Allocs, req.Evals)
}

func (fx *drainFixture) completeDrains(req *structs.BatchNodeUpdateDrainRequest) error {
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

func TestPlanDrains(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	deadline := func(d time.Duration) *structs.DrainStrategy {
		return &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: d}, StartedAt: now.Add(-time.Minute), ForceDeadline: now.Add(-time.Minute).Add(d)}
	}
	longAgo := now.Add(-time.Hour)

	cases := []struct {
		name string
		// setup returns the allocation IDs expected to be marked, the
		// expected completions and the expected wake time.
		setup func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time)
		drain *structs.DrainStrategy
	}{
		{
			name:  "a node with nothing on it completes at once",
			drain: deadline(time.Hour),
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				return nil, map[string]bool{fx.draining.ID: false}, time.Time{}
			},
		},
		{
			name:  "batch allocations run until the deadline",
			drain: deadline(time.Hour),
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				job := fx.job(t, "batch", structs.JobTypeBatch, 1, 0)
				fx.running(t, job, fx.draining, 0, longAgo)
				return nil, map[string]bool{}, now.Add(59 * time.Minute)
			},
		},
		{
			name:  "at the deadline everything left is migrated and the drain completes",
			drain: deadline(30 * time.Second),
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				batch := fx.job(t, "batch", structs.JobTypeBatch, 1, 0)
				svc := fx.job(t, "svc", structs.JobTypeService, 1, 1)
				sys := fx.job(t, "sys", structs.JobTypeSystem, 1, 0)
				a := fx.running(t, batch, fx.draining, 0, longAgo)
				b := fx.running(t, svc, fx.draining, 0, longAgo)
				c := fx.running(t, sys, fx.draining, 0, longAgo)
				return []string{a.ID, b.ID, c.ID}, map[string]bool{fx.draining.ID: true}, time.Time{}
			},
		},
		{
			name:  "a forced drain has passed its deadline",
			drain: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -time.Second}, StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				a := fx.running(t, fx.job(t, "batch", structs.JobTypeBatch, 1, 0), fx.draining, 0, longAgo)
				return []string{a.ID}, map[string]bool{fx.draining.ID: true}, time.Time{}
			},
		},
		{
			name:  "ignore-system leaves system allocations at the deadline",
			drain: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -time.Second, IgnoreSystemJobs: true}, StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				return nil, map[string]bool{fx.draining.ID: true}, time.Time{}
			},
		},
		{
			name:  "ignore-system lets a node holding only system allocations complete",
			drain: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{IgnoreSystemJobs: true}, StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				return nil, map[string]bool{fx.draining.ID: false}, time.Time{}
			},
		},
		{
			name:  "system allocations leave once nothing else runs",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				sys := fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				done := fx.running(t, fx.job(t, "batch", structs.JobTypeBatch, 1, 0), fx.draining, 0, longAgo)
				fx.finish(t, done)
				return []string{sys.ID}, map[string]bool{}, time.Time{}
			},
		},
		{
			name:  "system allocations wait while other work runs",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				fx.running(t, fx.job(t, "batch", structs.JobTypeBatch, 1, 0), fx.draining, 0, longAgo)
				return nil, map[string]bool{}, time.Time{}
			},
		},
		{
			name:  "service allocations move max_parallel at a time",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				svc := fx.job(t, "svc", structs.JobTypeService, 3, 2)
				var as []*structs.Allocation
				for i := range uint(3) {
					as = append(as, fx.running(t, svc, fx.draining, i, longAgo))
				}
				ids := allocIDs(as)
				sort.Strings(ids)
				return ids[:2], map[string]bool{}, time.Time{}
			},
		},
		{
			name:  "a replacement counts as healthy only after min_healthy_time",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				svc := fx.job(t, "svc", structs.JobTypeService, 2, 1)
				moving := fx.running(t, svc, fx.draining, 0, longAgo)
				must.NoError(t, fx.markMigrate(&structs.AllocUpdateDesiredTransitionRequest{
					Allocs: map[string]*structs.DesiredTransition{moving.ID: {Migrate: new(true)}},
				}))
				fx.running(t, svc, fx.draining, 1, longAgo)
				fx.running(t, svc, fx.other, 0, now.Add(-3*time.Second))
				// min_healthy_time is 10s: the replacement is healthy in 7s.
				return nil, map[string]bool{}, now.Add(7 * time.Second)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newDrainFixture(t, c.drain)
			wantMigrate, wantComplete, wantWake := c.setup(t, fx)
			p, err := planDrains(memdb.NewWatchSet(), fx.st, now)
			must.NoError(t, err)
			got := allocIDs(p.migrate)
			sort.Strings(got)
			wantMigrate = append([]string{}, wantMigrate...)
			sort.Strings(wantMigrate)
			must.Eq(t, wantMigrate, got)
			must.Eq(t, wantComplete, p.complete)
			must.True(t, wantWake.Equal(p.wake), must.Sprintf("wake %v, want %v", p.wake, wantWake))
		})
	}
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
		d := &nodeDrainer{logger: hclog.NewNullLogger(), state: func() *state.StateStore { return fx.st }, writer: fx, now: time.Now}
		done := make(chan struct{})
		go func() { defer close(done); d.run(ctx) }()

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
		d := &nodeDrainer{logger: hclog.NewNullLogger(), state: func() *state.StateStore { return fx.st }, writer: fx, now: time.Now}
		done := make(chan struct{})
		go func() { defer close(done); d.run(ctx) }()

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

// The deadline is in Raft: a drain set on one leader is enforced, at the
// same instant, by the next one.
func TestNodeDrain_DeadlineSurvivesLeaderFailover(t *testing.T) {
	s1 := testServer(t, clusterConfig(t, 3, nil))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, clusterConfig(t, 3, join))
	s3 := testServer(t, clusterConfig(t, 3, join))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)

	node := registerNode(t, leader)
	registerJob(t, leader, mockJob("work"))
	var alloc *structs.Allocation
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _ := leader.State().AllocsByNode(nil, node.ID)
		if len(allocs) != 1 {
			return false
		}
		alloc = allocs[0]
		return true
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))

	var dr structs.NodeDrainUpdateResponse
	must.NoError(t, leader.RPC("Node.UpdateDrain", &structs.NodeUpdateDrainRequest{
		NodeID: node.ID, DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: 3 * time.Second}},
	}, &dr))
	// On a loaded machine leadership can move during the call, which is
	// then forwarded: wait for this server to apply the drain.
	var forceDeadline time.Time
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		set, err := leader.State().NodeByID(nil, node.ID)
		if err != nil || set == nil || set.DrainStrategy == nil {
			return false
		}
		forceDeadline = set.DrainStrategy.ForceDeadline
		return true
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	must.False(t, forceDeadline.IsZero())

	must.NoError(t, leader.Shutdown())
	var survivors []*Server
	for _, s := range servers {
		if s != leader {
			survivors = append(survivors, s)
		}
	}
	newLeader := waitForLeader(t, survivors...)
	got, err := newLeader.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.True(t, got.DrainStrategy.ForceDeadline.Equal(forceDeadline), must.Sprint("every server holds the same deadline"))

	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		n, _ := newLeader.State().NodeByID(nil, node.ID)
		return n != nil && n.DrainStrategy == nil
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	n, err := newLeader.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	last := n.Events[len(n.Events)-1]
	must.Eq(t, structs.NodeEventDrainComplete, last.Message)
	must.Eq(t, "true", last.Details[structs.NodeEventDetailDeadlined])
	must.False(t, last.Timestamp.Before(forceDeadline), must.Sprint("never before the deadline"))
	a, err := newLeader.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.True(t, a.DesiredTransition.ShouldMigrate())
}
