package allocrunner

import (
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/client/state"
	"github.com/nomadq/nomadq/structs"
)

// fakeRunner records what the hook asks of its alloc runner.
type fakeRunner struct {
	mu       sync.Mutex
	alloc    *structs.Allocation
	env      map[string]string
	kills    []time.Time
	opts     []KillAllOpts
	shutdown bool
	// refuse makes KillAll lose, as when a stop is already under way.
	refuse bool
	// afterAlloc runs once Alloc has read the alloc and before it returns
	// it, so a test can slip an update in between.
	afterAlloc func()
	// signals records SignalTasks calls; states is what TaskStates
	// answers (the events a restored task carries).
	signals []sentSignal
	states  map[string]*structs.TaskState
}

// sentSignal is one SignalTasks call.
type sentSignal struct {
	at             time.Time
	signal, reason string
}

func (f *fakeRunner) SignalTasks(signal, reason string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, sentSignal{at: time.Now(), signal: signal, reason: reason})
	if f.states == nil {
		f.states = map[string]*structs.TaskState{}
	}
	ts := f.states["main"]
	if ts == nil {
		ts = &structs.TaskState{}
		f.states["main"] = ts
	}
	ts.Events = append(ts.Events, &structs.TaskEvent{Type: structs.TaskSignaling, TaskSignal: signal, TaskSignalReason: reason})
	return 1
}

func (f *fakeRunner) TaskStates() map[string]*structs.TaskState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]*structs.TaskState, len(f.states))
	for k, v := range f.states {
		out[k] = v.Copy()
	}
	return out
}

func (f *fakeRunner) sent() []sentSignal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.signals)
}

func (f *fakeRunner) Alloc() *structs.Allocation {
	f.mu.Lock()
	a, after := f.alloc, f.afterAlloc
	f.mu.Unlock()
	if after != nil {
		after()
	}
	return a
}

func (f *fakeRunner) KillAll(reason string, opts KillAllOpts) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse || f.shutdown {
		return false
	}
	f.kills = append(f.kills, time.Now())
	f.opts = append(f.opts, opts)
	return true
}

func (f *fakeRunner) SetTaskEnv(k, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.env == nil {
		f.env = map[string]string{}
	}
	f.env[k] = v
}

func (f *fakeRunner) UnsetTaskEnv(k string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.env, k)
}

func (f *fakeRunner) taskEnv() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.env)
}

func (f *fakeRunner) ShuttingDown() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shutdown
}

func (f *fakeRunner) Logger() hclog.Logger { return hclog.NewNullLogger() }

func (f *fakeRunner) killTimes() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.kills...)
}

// maxRunAlloc is a batch alloc created now with the given limit.
func maxRunAlloc(d time.Duration) *structs.Allocation {
	a := testAlloc(mt("main", map[string]any{"run_for": "1h"}))
	a.Job.TaskGroups[0].MaxRunDuration = &d
	return a
}

// withLimit returns a copy of a whose group has limit d, as an in-place
// job update delivers it.
func withLimit(a *structs.Allocation, d time.Duration) *structs.Allocation {
	c := *a
	job := *a.Job
	tg := *a.Job.TaskGroups[0]
	tg.MaxRunDuration = &d
	job.TaskGroups = []*structs.TaskGroup{&tg}
	c.Job = &job
	c.AllocModifyIndex++
	return &c
}

// withoutLimit returns a copy of a whose group no longer sets
// max_run_duration.
func withoutLimit(a *structs.Allocation) *structs.Allocation {
	c := withLimit(a, 0)
	c.Job.TaskGroups[0].MaxRunDuration = nil
	return c
}

// withIndex returns a copy of a with the given AllocModifyIndex.
func withIndex(a *structs.Allocation, idx uint64) *structs.Allocation {
	c := *a
	c.AllocModifyIndex = idx
	return &c
}

func startHook(t *testing.T, a *structs.Allocation) (*maxRunDurationHook, *fakeRunner) {
	t.Helper()
	r := &fakeRunner{alloc: a}
	h := newMaxRunDurationHook(r).(*maxRunDurationHook)
	must.NoError(t, h.Prerun())
	return h, r
}

func TestPlanMaxRun(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	d := 10 * time.Second
	base := func() *structs.Allocation {
		a := maxRunAlloc(d)
		a.CreateTime = now.Add(-4 * time.Second).UnixNano()
		return a
	}
	cases := []struct {
		name   string
		mutate func(a *structs.Allocation)
		armed  bool
		remain time.Duration
	}{
		{"running batch", func(*structs.Allocation) {}, true, 6 * time.Second},
		{"sysbatch", func(a *structs.Allocation) { a.Job.Type = structs.JobTypeSysBatch }, true, 6 * time.Second},
		{"already past", func(a *structs.Allocation) { a.CreateTime = now.Add(-time.Minute).UnixNano() }, true, -50 * time.Second},
		{"service job", func(a *structs.Allocation) { a.Job.Type = structs.JobTypeService }, false, 0},
		{"no limit", func(a *structs.Allocation) { a.Job.TaskGroups[0].MaxRunDuration = nil }, false, 0},
		{"zero limit", func(a *structs.Allocation) { z := time.Duration(0); a.Job.TaskGroups[0].MaxRunDuration = &z }, false, 0},
		{"desired stop", func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop }, false, 0},
		{"client complete", func(a *structs.Allocation) { a.ClientStatus = structs.AllocClientStatusComplete }, false, 0},
		{"client failed", func(a *structs.Allocation) { a.ClientStatus = structs.AllocClientStatusFailed }, false, 0},
		{"no create time", func(a *structs.Allocation) { a.CreateTime = 0 }, false, 0},
		{"unknown group", func(a *structs.Allocation) { a.TaskGroup = "other" }, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := base()
			c.mutate(a)
			p := PlanMaxRun(a, now)
			must.Eq(t, c.armed, p.Armed)
			if c.armed {
				must.Eq(t, c.remain, p.Remaining)
				must.Eq(t, d, p.Configured)
				must.Eq(t, time.Unix(0, a.CreateTime).Add(d), p.Deadline)
			}
		})
	}
}

func TestDecideMaxRun(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	created := now.Add(-4 * time.Second)
	alloc := func(idx uint64, limit time.Duration) *structs.Allocation {
		a := withIndex(maxRunAlloc(limit), idx)
		a.CreateTime = created.UnixNano()
		if limit == 0 {
			a.Job.TaskGroups[0].MaxRunDuration = nil
		}
		return a
	}
	armed := func(idx uint64, limit time.Duration) MaxRunState {
		return MaxRunState{index: idx, armed: true, configured: limit, deadline: created.Add(limit)}
	}
	cases := []struct {
		name   string
		cur    MaxRunState
		alloc  *structs.Allocation
		next   MaxRunState
		action MaxRunAction
	}{
		{"first alloc arms", MaxRunState{}, alloc(5, 10*time.Second), armed(5, 10*time.Second), MaxRunArm},
		{"first alloc overdue kills", MaxRunState{}, alloc(5, 2*time.Second), armed(5, 2*time.Second), MaxRunKill},
		{"first alloc without limit", MaxRunState{}, alloc(5, 0), MaxRunState{index: 5}, MaxRunKeep},
		{"same limit keeps, index moves", armed(5, 10*time.Second), alloc(6, 10*time.Second), armed(6, 10*time.Second), MaxRunKeep},
		{"raised limit re-arms", armed(5, 10*time.Second), alloc(6, 20*time.Second), armed(6, 20*time.Second), MaxRunArm},
		{"lowered below elapsed kills", armed(5, 10*time.Second), alloc(6, time.Second), armed(6, time.Second), MaxRunKill},
		{"removed limit disarms", armed(5, 10*time.Second), alloc(6, 0), MaxRunState{index: 6}, MaxRunDisarm},
		{"disarmed stays so", MaxRunState{index: 6}, alloc(7, 0), MaxRunState{index: 7}, MaxRunKeep},
		{"older alloc is stale", armed(6, 20*time.Second), alloc(5, 10*time.Second), armed(6, 20*time.Second), MaxRunKeep},
		{"older alloc cannot disarm", armed(6, 20*time.Second), alloc(5, 0), armed(6, 20*time.Second), MaxRunKeep},
		{"older alloc cannot re-arm", MaxRunState{index: 6}, alloc(5, 10*time.Second), MaxRunState{index: 6}, MaxRunKeep},
		{"nil alloc", armed(6, 20*time.Second), nil, armed(6, 20*time.Second), MaxRunKeep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, action, _ := DecideMaxRun(c.cur, c.alloc, now)
			must.Eq(t, c.action, action)
			must.EqOp(t, c.next, next)
		})
	}
}

func TestMaxRunDurationHook_FiresAtDeadlineNotBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := maxRunAlloc(10 * time.Second)
		created := time.Unix(0, a.CreateTime)
		_, r := startHook(t, a)
		must.Eq(t, created.Add(10*time.Second).UTC().Format(time.RFC3339), r.env[MaxRunEnvVar])

		time.Sleep(10*time.Second - time.Nanosecond)
		synctest.Wait()
		must.SliceEmpty(t, r.killTimes())

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		kills := r.killTimes()
		must.SliceLen(t, 1, kills)
		must.Eq(t, created.Add(10*time.Second), kills[0])
		must.Eq(t, KillAllOpts{
			DisplayMessage:    "allocation exceeded max_run_duration",
			SkipPoststop:      true,
			ClientStatus:      structs.AllocClientStatusComplete,
			ClientDescription: "allocation exceeded max_run_duration",
		}, r.opts[0])
	})
}

func TestMaxRunDurationHook_UnrelatedUpdatesDoNotMoveIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := maxRunAlloc(10 * time.Second)
		created := time.Unix(0, a.CreateTime)
		h, r := startHook(t, a)
		for i := 0; i < 9; i++ {
			time.Sleep(time.Second)
			u := *a
			u.AllocModifyIndex = uint64(i + 10)
			u.DesiredDescription = "something else"
			u.TaskStates = map[string]*structs.TaskState{"main": {State: structs.TaskStateRunning, StartedAt: time.Now()}}
			must.NoError(t, h.Update(&u))
			// The same limit from a new copy of the job: not a change.
			must.NoError(t, h.Update(withLimit(&u, 10*time.Second)))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		must.Eq(t, []time.Time{created.Add(10 * time.Second)}, r.killTimes())
	})
}

func TestMaxRunDurationHook_ChangedDurationRearms(t *testing.T) {
	t.Run("raised", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := maxRunAlloc(10 * time.Second)
			created := time.Unix(0, a.CreateTime)
			h, r := startHook(t, a)
			time.Sleep(2 * time.Second)
			must.NoError(t, h.Update(withLimit(a, 20*time.Second)))
			time.Sleep(15 * time.Second)
			synctest.Wait()
			must.SliceEmpty(t, r.killTimes())
			time.Sleep(3 * time.Second)
			synctest.Wait()
			must.Eq(t, []time.Time{created.Add(20 * time.Second)}, r.killTimes())
		})
	})
	t.Run("lowered below elapsed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := maxRunAlloc(time.Minute)
			h, r := startHook(t, a)
			time.Sleep(5 * time.Second)
			at := time.Now()
			must.NoError(t, h.Update(withLimit(a, 2*time.Second)))
			synctest.Wait()
			must.Eq(t, []time.Time{at}, r.killTimes())
		})
	})
}

func TestMaxRunDurationHook_StopsArmNothing(t *testing.T) {
	for name, cancel := range map[string]func(h *maxRunDurationHook){
		"shutdown": func(h *maxRunDurationHook) { h.Shutdown() },
		"postrun":  func(h *maxRunDurationHook) { _ = h.Postrun() },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := maxRunAlloc(10 * time.Second)
				h, r := startHook(t, a)
				time.Sleep(3 * time.Second)
				cancel(h)
				// A late update must not bring the timer back.
				must.NoError(t, h.Update(withLimit(a, 5*time.Second)))
				time.Sleep(time.Hour)
				synctest.Wait()
				must.SliceEmpty(t, r.killTimes())
			})
		})
	}
}

func TestMaxRunDurationHook_ShutdownNeverCountsAsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := maxRunAlloc(10 * time.Second)
		_, r := startHook(t, a)
		r.mu.Lock()
		r.shutdown = true // the runner is shutting down when the timer fires
		r.mu.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		must.SliceEmpty(t, r.killTimes())
	})
}

func TestMaxRunDurationHook_RestartKeepsRemainingBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := maxRunAlloc(10 * time.Second)
		created := time.Unix(0, a.CreateTime)
		h1, r1 := startHook(t, a)
		time.Sleep(5 * time.Second)
		h1.Shutdown()

		// A new client process restores the same alloc half-way.
		_, r2 := startHook(t, a)
		time.Sleep(5*time.Second - time.Millisecond)
		synctest.Wait()
		must.SliceEmpty(t, r2.killTimes())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		must.Eq(t, []time.Time{created.Add(10 * time.Second)}, r2.killTimes())
		must.SliceEmpty(t, r1.killTimes())
	})
}

func TestMaxRunDurationHook_ExpiredOnRestoreFiresAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := maxRunAlloc(10 * time.Second)
		a.CreateTime = time.Now().Add(-time.Minute).UnixNano()
		now := time.Now()
		_, r := startHook(t, a)
		synctest.Wait()
		must.Eq(t, []time.Time{now}, r.killTimes())
	})
}

func TestMaxRunDurationHook_TerminalOrStoppedArmNothing(t *testing.T) {
	for name, mutate := range map[string]func(a *structs.Allocation){
		"desired stop":    func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop },
		"client complete": func(a *structs.Allocation) { a.ClientStatus = structs.AllocClientStatusComplete },
		"client failed":   func(a *structs.Allocation) { a.ClientStatus = structs.AllocClientStatusFailed },
		"service job":     func(a *structs.Allocation) { a.Job.Type = structs.JobTypeService },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := maxRunAlloc(time.Second)
				a.CreateTime = time.Now().Add(-time.Minute).UnixNano() // long expired
				mutate(a)
				_, r := startHook(t, a)
				time.Sleep(time.Hour)
				synctest.Wait()
				must.SliceEmpty(t, r.killTimes())
				must.MapNotContainsKey(t, r.env, MaxRunEnvVar)
			})
		})
	}
}

// The stop came first: KillAll loses and the hook changes nothing.
func TestMaxRunDurationHook_StopRacingDeadlineStaysStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mt("main", map[string]any{"run_for": "1h", "kill_after": "20s"})
		a := testAlloc(main)
		d := 10 * time.Second
		a.Job.TaskGroups[0].MaxRunDuration = &d
		ar, rec := newRunner(t, a)
		go ar.Run()
		time.Sleep(9 * time.Second)
		synctest.Wait()
		stopped := *a
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		ar.Update(&stopped) // still dying when the deadline passes
		<-ar.WaitCh()
		st, desc := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusComplete, st)
		must.Eq(t, "All tasks have completed", desc)
		k := find(ar.TaskStates()["main"], structs.TaskKilling)
		must.NotEq(t, MaxRunDurationReason, k.DisplayMessage)
		must.Eq(t, "All tasks have completed", rec.last.ClientDescription)
	})
}

// Through a real alloc runner: the deadline kills the task and the
// alloc ends complete with the reason, once the task is dead.
func TestMaxRunDurationHook_RunnerEndsComplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mt("main", map[string]any{"run_for": "1h", "exit_code": 3})
		post := mt("post", map[string]any{"run_for": "1s"})
		post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
		a := testAlloc(main, post)
		d := 10 * time.Second
		a.Job.TaskGroups[0].MaxRunDuration = &d
		ar, rec := newRunner(t, a)
		must.Eq(t, "max_run_duration", ar.hooks[0].Name())
		start := time.Now()
		go ar.Run()
		<-ar.WaitCh()
		ts := ar.TaskStates()
		k := find(ts["main"], structs.TaskKilling)
		must.NotNil(t, k)
		must.Eq(t, MaxRunDurationReason, k.DisplayMessage)
		must.Eq(t, start.Add(d), time.Unix(0, k.Time))
		must.True(t, ts["post"].StartedAt.IsZero())
		must.Eq(t, structs.TaskStateDead, ts["post"].State)
		must.Eq(t, structs.AllocClientStatusComplete, rec.last.ClientStatus)
		must.Eq(t, MaxRunDurationReason, rec.last.ClientDescription)
	})
}

// A Prerun that read an older alloc and an Update with a newer one race;
// whatever the order, the newest alloc (by AllocModifyIndex) decides.
func TestMaxRunDurationHook_OlderAllocNeverApplied(t *testing.T) {
	cases := []struct {
		name string
		// run drives the hook; v1 has a 10s limit at index 10.
		run  func(t *testing.T, v1 *structs.Allocation) *fakeRunner
		want time.Duration // the limit that must be in force
		env  bool          // whether the deadline stays in the task env
	}{
		{
			name: "update lands between prerun reading the alloc and applying it",
			run: func(t *testing.T, v1 *structs.Allocation) *fakeRunner {
				r := &fakeRunner{alloc: v1}
				h := newMaxRunDurationHook(r).(*maxRunDurationHook)
				r.afterAlloc = func() { must.NoError(t, h.Update(withLimit(v1, 20*time.Second))) }
				must.NoError(t, h.Prerun())
				return r
			},
			want: 20 * time.Second,
			env:  true,
		},
		{
			name: "update removing the limit lands before prerun applies",
			run: func(t *testing.T, v1 *structs.Allocation) *fakeRunner {
				r := &fakeRunner{alloc: v1}
				h := newMaxRunDurationHook(r).(*maxRunDurationHook)
				r.afterAlloc = func() { must.NoError(t, h.Update(withoutLimit(v1))) }
				must.NoError(t, h.Prerun())
				return r
			},
			want: 0,
		},
		{
			name: "an older update after a newer prerun",
			run: func(t *testing.T, v1 *structs.Allocation) *fakeRunner {
				h, r := startHook(t, withLimit(v1, 20*time.Second))
				must.NoError(t, h.Update(v1))
				must.NoError(t, h.Update(withIndex(withoutLimit(v1), 9)))
				return r
			},
			want: 20 * time.Second,
			env:  true,
		},
		{
			name: "the same index again is applied",
			run: func(t *testing.T, v1 *structs.Allocation) *fakeRunner {
				h, r := startHook(t, v1)
				must.NoError(t, h.Update(withIndex(withLimit(v1, 20*time.Second), 10)))
				return r
			},
			want: 20 * time.Second,
			env:  true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v1 := withIndex(maxRunAlloc(10*time.Second), 10)
				created := time.Unix(0, v1.CreateTime)
				r := c.run(t, v1)
				time.Sleep(time.Hour)
				synctest.Wait()
				if c.want == 0 {
					must.SliceEmpty(t, r.killTimes())
				} else {
					must.Eq(t, []time.Time{created.Add(c.want)}, r.killTimes())
				}
				if c.env {
					must.Eq(t, created.Add(c.want).UTC().Format(time.RFC3339), r.taskEnv()[MaxRunEnvVar])
				} else {
					must.MapNotContainsKey(t, r.taskEnv(), MaxRunEnvVar)
				}
			})
		})
	}
}

// Tasks started after a disarm must not see a deadline nobody enforces;
// after a re-arm they see the new one.
func TestMaxRunDurationHook_DisarmTakesDeadlineOutOfEnv(t *testing.T) {
	cases := []struct {
		name    string
		disarms func(a *structs.Allocation) *structs.Allocation
	}{
		{"limit removed", withoutLimit},
		{"told to stop", func(a *structs.Allocation) *structs.Allocation {
			u := withLimit(a, 10*time.Second)
			u.DesiredStatus = structs.AllocDesiredStatusStop
			return u
		}},
		{"no longer batch", func(a *structs.Allocation) *structs.Allocation {
			u := withLimit(a, 10*time.Second)
			u.Job.Type = structs.JobTypeService
			return u
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := maxRunAlloc(10 * time.Second)
				created := time.Unix(0, a.CreateTime)
				h, r := startHook(t, a)
				must.Eq(t, created.Add(10*time.Second).UTC().Format(time.RFC3339), r.taskEnv()[MaxRunEnvVar])
				disarmed := c.disarms(a)
				must.NoError(t, h.Update(disarmed))
				must.MapNotContainsKey(t, r.taskEnv(), MaxRunEnvVar)

				rearmed := withLimit(disarmed, 30*time.Second)
				rearmed.DesiredStatus = structs.AllocDesiredStatusRun
				rearmed.Job.Type = structs.JobTypeBatch
				must.NoError(t, h.Update(rearmed))
				must.Eq(t, created.Add(30*time.Second).UTC().Format(time.RFC3339), r.taskEnv()[MaxRunEnvVar])
				time.Sleep(time.Hour)
				synctest.Wait()
				must.Eq(t, []time.Time{created.Add(30 * time.Second)}, r.killTimes())
			})
		})
	}
}

// envDriver is the mock driver, remembering the deadline variable each
// run of a task was started with ("-" when it had none).
type envDriver struct {
	*mock.Driver
	mu   sync.Mutex
	seen []string
}

func (d *envDriver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	v, ok := tc.Env[MaxRunEnvVar]
	if !ok {
		v = "-"
	}
	d.mu.Lock()
	d.seen = append(d.seen, v)
	d.mu.Unlock()
	return d.Driver.StartTask(tc)
}

func (d *envDriver) runs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.seen)
}

// Through a real runner: a task restarted by its restart policy gets the
// environment of the limit in force when it restarts.
func TestMaxRunDurationHook_RestartedTaskSeesCurrentDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mt("main", map[string]any{"run_for": "10s", "exit_code": 1})
		a := maxRunAlloc(time.Hour)
		a.Job.TaskGroups[0].Tasks = []*structs.Task{main}
		a.Job.TaskGroups[0].RestartPolicy = &structs.RestartPolicy{Attempts: 10, Interval: 24 * time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
		created := time.Unix(0, a.CreateTime)
		drv := &envDriver{Driver: mock.New()}
		ar, _ := newRunnerWith(t, a, func(c *Config) { c.Drivers[mock.Name] = drv })
		go ar.Run()

		time.Sleep(5 * time.Second) // run 1: 0s-10s
		removed := withoutLimit(a)
		ar.Update(removed)
		time.Sleep(10 * time.Second) // run 2: 11s-21s
		rearmed := withLimit(removed, 2*time.Hour)
		ar.Update(rearmed)
		time.Sleep(10 * time.Second) // run 3 from 22s
		synctest.Wait()
		stopped := *rearmed
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		ar.Update(&stopped)
		<-ar.WaitCh()

		must.Eq(t, []string{
			created.Add(time.Hour).UTC().Format(time.RFC3339),
			"-",
			created.Add(2 * time.Hour).UTC().Format(time.RFC3339),
		}, drv.runs())
	})
}

// delayedKill is the runner a max_run_duration hook sees in a test: it
// holds every KillAll back by delay, then records that it passed it on.
type delayedKill struct {
	Runner
	delay  time.Duration
	killed chan struct{}
	once   sync.Once
}

func (d *delayedKill) KillAll(reason string, opts KillAllOpts) bool {
	time.Sleep(d.delay)
	ok := d.Runner.KillAll(reason, opts)
	d.once.Do(func() { close(d.killed) })
	return ok
}

// waitKillHook is a prerun hook after max_run_duration that holds setup
// back until the kill has been passed on (or a day has gone by).
type waitKillHook struct{ killed chan struct{} }

func (h *waitKillHook) Name() string { return "wait_kill" }

func (h *waitKillHook) Prerun() error {
	select {
	case <-h.killed:
	case <-time.After(24 * time.Hour):
	}
	return nil
}

// slowDeathState is a runner's state DB that takes an hour to record the
// death of one task, which holds the runner's ordered kill back there.
type slowDeathState struct{ task string }

func (s slowDeathState) PutTask(_, task string, ts *structs.TaskState, _ *state.LocalTaskState) error {
	if task == s.task && ts.State == structs.TaskStateDead {
		time.Sleep(time.Hour)
	}
	return nil
}
func (slowDeathState) PutAlloc(*structs.Allocation) error                        { return nil }
func (slowDeathState) PutAllocRunnerState(string, *state.AllocRunnerState) error { return nil }
func (slowDeathState) DeleteAlloc(string) error                                  { return nil }

// An alloc whose deadline passed before it ran never starts a task,
// whether the kill or the task start would come first.
func TestMaxRunDurationHook_OverdueAtPrerunStartsNothing(t *testing.T) {
	cases := []struct {
		name string
		// killDelay holds the kill back, giving tasks every chance to
		// start first.
		killDelay time.Duration
		// setupWaits holds the rest of setup back until the kill is done.
		setupWaits bool
		// slowKill holds the runner's ordered kill back on the first task
		// it kills (poststop), so the prestart ones are killed late.
		slowKill bool
	}{
		{name: "kill late", killDelay: time.Minute},
		{name: "setup after kill", setupWaits: true},
		{name: "slow ordered kill", slowKill: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				side := mt("side", map[string]any{"run_for": "10h"})
				side.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}
				initT := mt("init", map[string]any{"run_for": "1s"})
				initT.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
				main := mt("main", map[string]any{"run_for": "10h"})
				main.Leader = true
				after := mt("after", map[string]any{"run_for": "10h"})
				after.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststart}
				post := mt("post", map[string]any{"run_for": "1s"})
				post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
				a := testAlloc(side, initT, main, after, post)
				d := 10 * time.Second
				a.Job.TaskGroups[0].MaxRunDuration = &d
				a.CreateTime = time.Now().Add(-time.Minute).UnixNano()

				killed := make(chan struct{})
				ar, rec := newRunnerWith(t, a, func(cfg *Config) {
					if c.setupWaits {
						cfg.ExtraHooks = []HookFactory{func(Runner) RunnerHook { return &waitKillHook{killed: killed} }}
					}
					if c.slowKill {
						cfg.State = slowDeathState{task: "post"}
					}
				})
				must.Eq(t, "max_run_duration", ar.hooks[0].Name())
				ar.hooks[0] = newMaxRunDurationHook(&delayedKill{Runner: ar, delay: c.killDelay, killed: killed})
				go ar.Run()
				<-ar.WaitCh()

				for name, ts := range ar.TaskStates() {
					must.Nil(t, find(ts, structs.TaskStarted), must.Sprintf("%s: %v", name, types(ts)))
					must.True(t, ts.StartedAt.IsZero(), must.Sprint(name))
					must.Eq(t, structs.TaskStateDead, ts.State, must.Sprint(name))
				}
				must.Eq(t, structs.AllocClientStatusComplete, rec.last.ClientStatus)
				must.Eq(t, MaxRunDurationReason, rec.last.ClientDescription)
			})
		})
	}
}
