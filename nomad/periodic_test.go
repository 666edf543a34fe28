package nomad

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// fakeLauncher writes launches straight into a state store, as the FSM
// would, and can finish each child at once.
type fakeLauncher struct {
	mu       sync.Mutex
	st       *state.StateStore
	index    uint64
	finish   bool
	launches []*structs.PeriodicLaunchRequest
}

func (l *fakeLauncher) LaunchPeriodic(req *structs.PeriodicLaunchRequest) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.index++
	if err := l.st.UpsertPeriodicLaunch(l.index, req.Job, req.Eval, req.Launch); err != nil {
		return 0, err
	}
	l.launches = append(l.launches, req)
	if l.finish {
		l.finishLocked(req)
	}
	return l.index, nil
}

// finishLocked completes the child's eval without allocs, which makes the
// child dead.
func (l *fakeLauncher) finishLocked(req *structs.PeriodicLaunchRequest) {
	l.index++
	e := *req.Eval
	e.Status = structs.EvalStatusComplete
	if err := l.st.UpsertEvals(l.index, []*structs.Evaluation{&e}); err != nil {
		panic(err)
	}
}

func (l *fakeLauncher) finishAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.launches {
		l.finishLocked(r)
	}
}

// launchTimes returns the launch times as offsets from start.
func (l *fakeLauncher) launchTimes(start time.Time) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Duration
	for _, r := range l.launches {
		out = append(out, time.Unix(0, r.Launch.Launch).Sub(start))
	}
	return out
}

func periodicParent(t *testing.T, st *state.StateStore, cfg structs.PeriodicConfig) *structs.Job {
	t.Helper()
	job := mockJob("report")
	cfg.Enabled = true
	job.Periodic = &cfg
	job.SubmitTime = time.Now().UnixNano()
	must.NoError(t, st.UpsertJob(1, job))
	return job
}

// startDispatcher runs a dispatcher (one leadership term) until the
// returned stop function is called.
func startDispatcher(st *state.StateStore, l periodicLauncher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d := newPeriodicDispatcher(hclog.NewNullLogger(), func() *state.StateStore { return st }, l)
	go func() {
		defer close(done)
		d.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

func TestPeriodicDispatcher_LaunchesOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		st, err := state.NewStateStore()
		must.NoError(t, err)
		parent := periodicParent(t, st, structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}})
		l := &fakeLauncher{st: st, index: 10, finish: true}
		stop := startDispatcher(st, l)

		time.Sleep(10*time.Second + 500*time.Millisecond)
		synctest.Wait()
		stop()

		must.Eq(t, []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second}, l.launchTimes(start))
		child, err := st.JobByID(nil, parent.Namespace, structs.PeriodicChildID(parent.ID, start.Add(2*time.Second).Unix()))
		must.NoError(t, err)
		must.NotNil(t, child)
		must.Eq(t, parent.ID, child.ParentID)
		must.Nil(t, child.Periodic)
		must.Eq(t, structs.EvalTriggerPeriodicJob, l.launches[0].Eval.TriggeredBy)
		launch, err := st.PeriodicLaunchByID(nil, parent.Namespace, parent.ID)
		must.NoError(t, err)
		must.Eq(t, start.Add(10*time.Second).UnixNano(), launch.Launch)
		summary, err := st.JobSummaryByID(nil, parent.Namespace, parent.ID)
		must.NoError(t, err)
		must.Eq(t, int64(5), summary.Children.Dead)
	})
}

func TestPeriodicDispatcher_ProhibitOverlap(t *testing.T) {
	for _, prohibit := range []bool{true, false} {
		t.Run(map[bool]string{true: "prohibit", false: "allow"}[prohibit], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				st, err := state.NewStateStore()
				must.NoError(t, err)
				periodicParent(t, st, structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}, ProhibitOverlap: prohibit})
				l := &fakeLauncher{st: st, index: 10} // children keep running
				stop := startDispatcher(st, l)
				defer stop()

				time.Sleep(10*time.Second + 500*time.Millisecond)
				synctest.Wait()
				if !prohibit {
					must.Len(t, 5, l.launchTimes(start))
					return
				}
				// Only the first launch: every later tick found it running.
				must.Eq(t, []time.Duration{2 * time.Second}, l.launchTimes(start))

				// Once it finishes, the next tick launches (no instant
				// catch-up for the skipped ticks).
				time.Sleep(500 * time.Millisecond) // t = 11s
				l.finishAll()
				synctest.Wait()
				must.Len(t, 1, l.launchTimes(start))
				time.Sleep(1500 * time.Millisecond) // t = 12.5s
				synctest.Wait()
				must.Eq(t, []time.Duration{2 * time.Second, 12 * time.Second}, l.launchTimes(start))
			})
		})
	}
}

func TestPeriodicDispatcher_OneCatchUpAfterLeaderChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		st, err := state.NewStateStore()
		must.NoError(t, err)
		periodicParent(t, st, structs.PeriodicConfig{Specs: []string{"0 * * * *"}})
		l := &fakeLauncher{st: st, index: 10, finish: true}

		stop := startDispatcher(st, l)
		time.Sleep(time.Hour + 30*time.Second)
		synctest.Wait()
		stop() // leadership lost at 01:00:30
		must.Eq(t, []time.Duration{time.Hour}, l.launchTimes(start))

		// Five launches are missed while no server leads.
		time.Sleep(5 * time.Hour)
		synctest.Wait()
		must.Eq(t, []time.Duration{time.Hour}, l.launchTimes(start), must.Sprint("nothing launches without a leader"))
		stop = startDispatcher(st, l) // a new leader at 06:00:30
		defer stop()
		synctest.Wait()
		catchUp := 6*time.Hour + 30*time.Second
		must.Eq(t, []time.Duration{time.Hour, catchUp}, l.launchTimes(start))

		// Then the schedule goes on as before.
		time.Sleep(time.Hour)
		synctest.Wait()
		must.Eq(t, []time.Duration{time.Hour, catchUp, 7 * time.Hour}, l.launchTimes(start))
	})
}

func TestPeriodicDispatcher_DisabledAndStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := state.NewStateStore()
		must.NoError(t, err)
		parent := periodicParent(t, st, structs.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}})
		l := &fakeLauncher{st: st, index: 10, finish: true}
		stop := startDispatcher(st, l)
		defer stop()

		time.Sleep(2*time.Second + 500*time.Millisecond)
		synctest.Wait()
		stopped := parent.Copy()
		stopped.Stop = true
		must.NoError(t, st.UpsertJob(5, stopped))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		must.Len(t, 1, l.launchTimes(time.Time{}))
	})
}
