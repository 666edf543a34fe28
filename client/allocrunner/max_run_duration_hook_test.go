package allocrunner

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
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
}

func (f *fakeRunner) Alloc() *structs.Allocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alloc
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
