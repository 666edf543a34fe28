package allocrunner

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// warnAlloc is a batch alloc created now with the given limit and a
// SIGUSR1 warning before it.
func warnAlloc(limit, before time.Duration) *structs.Allocation {
	a := maxRunAlloc(limit)
	a.Job.TaskGroups[0].MaxRunDurationWarning = &structs.MaxRunDurationWarning{Before: before, Signal: "SIGUSR1"}
	return a
}

func TestMaxRunDurationHook_WarningSentOnceAtItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := warnAlloc(10*time.Second, 4*time.Second)
		created := time.Unix(0, a.CreateTime)
		deadline := created.Add(10 * time.Second)
		_, r := startHook(t, a)
		must.Eq(t, strconv.FormatInt(created.Add(6*time.Second).Unix(), 10), r.taskEnv()[MaxRunWarningEnvVar])

		time.Sleep(6*time.Second - time.Nanosecond)
		synctest.Wait()
		must.SliceEmpty(t, r.sent(), must.Sprint("the warning went out early"))

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		must.Eq(t, []sentSignal{{at: created.Add(6 * time.Second), signal: "SIGUSR1", reason: "max_run_duration deadline at " + deadline.UTC().Format(time.RFC3339)}}, r.sent())

		time.Sleep(4 * time.Second)
		synctest.Wait()
		must.SliceLen(t, 1, r.sent(), must.Sprint("the warning was sent again"))
		must.Eq(t, []time.Time{deadline}, r.killTimes())
	})
}

func TestMaxRunDurationHook_WarningAcrossRestarts(t *testing.T) {
	t.Run("restarted after the warning does not resend it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := warnAlloc(10*time.Second, 4*time.Second)
			created := time.Unix(0, a.CreateTime)
			h1, r1 := startHook(t, a)
			time.Sleep(7 * time.Second)
			synctest.Wait()
			must.SliceLen(t, 1, r1.sent())
			h1.Shutdown()

			// The new client restores the tasks with their events.
			r2 := &fakeRunner{alloc: a, states: r1.TaskStates()}
			h2 := newMaxRunDurationHook(r2).(*maxRunDurationHook)
			must.NoError(t, h2.Prerun())
			time.Sleep(3 * time.Second)
			synctest.Wait()
			must.Eq(t, []time.Time{created.Add(10 * time.Second)}, r2.killTimes())
			must.SliceEmpty(t, r2.sent(), must.Sprint("the restored event shows it went out; no new signal"))
		})
	})
	t.Run("restarted before the warning sends it on time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := warnAlloc(10*time.Second, 4*time.Second)
			created := time.Unix(0, a.CreateTime)
			h1, r1 := startHook(t, a)
			time.Sleep(3 * time.Second)
			h1.Shutdown()
			_, r2 := startHook(t, a)
			time.Sleep(4 * time.Second)
			synctest.Wait()
			must.SliceEmpty(t, r1.sent())
			sent := r2.sent()
			must.SliceLen(t, 1, sent)
			must.Eq(t, created.Add(6*time.Second), sent[0].at)
		})
	})
	t.Run("down over the warning time sends it late, at restore", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := warnAlloc(10*time.Second, 4*time.Second)
			created := time.Unix(0, a.CreateTime)
			time.Sleep(8 * time.Second)
			_, r := startHook(t, a)
			synctest.Wait()
			sent := r.sent()
			must.SliceLen(t, 1, sent)
			must.Eq(t, created.Add(8*time.Second), sent[0].at)
		})
	})
}

func TestMaxRunDurationHook_WarningFollowsInPlaceUpdates(t *testing.T) {
	t.Run("an extended deadline warns again before it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := warnAlloc(10*time.Second, 4*time.Second)
			created := time.Unix(0, a.CreateTime)
			h, r := startHook(t, a)
			time.Sleep(7 * time.Second)
			synctest.Wait()
			must.SliceLen(t, 1, r.sent())

			must.NoError(t, h.Update(withLimit(a, 20*time.Second)))
			must.Eq(t, strconv.FormatInt(created.Add(16*time.Second).Unix(), 10), r.taskEnv()[MaxRunWarningEnvVar])
			time.Sleep(9 * time.Second)
			synctest.Wait()
			sent := r.sent()
			must.SliceLen(t, 2, sent)
			must.Eq(t, created.Add(16*time.Second), sent[1].at)
			must.Eq(t, "max_run_duration deadline at "+created.Add(20*time.Second).UTC().Format(time.RFC3339), sent[1].reason)
		})
	})
	t.Run("a warning taken out is disarmed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := warnAlloc(10*time.Second, 4*time.Second)
			h, r := startHook(t, a)
			time.Sleep(2 * time.Second)
			up := withLimit(a, 10*time.Second)
			up.Job.TaskGroups[0].MaxRunDurationWarning = nil
			must.NoError(t, h.Update(up))
			_, ok := r.taskEnv()[MaxRunWarningEnvVar]
			must.False(t, ok)
			time.Sleep(9 * time.Second)
			synctest.Wait()
			must.SliceEmpty(t, r.sent())
			must.SliceLen(t, 1, r.killTimes())
		})
	})
	t.Run("a stop disarms it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := warnAlloc(10*time.Second, 4*time.Second)
			h, r := startHook(t, a)
			must.NoError(t, h.Postrun())
			time.Sleep(11 * time.Second)
			synctest.Wait()
			must.SliceEmpty(t, r.sent())
		})
	})
}

// Each warning sent counts once in warnings_total, labelled with the
// alloc's namespace, job and group; a restored client that finds it sent
// counts nothing.
func TestMaxRunDurationHook_WarningCounted(t *testing.T) {
	inm := metrics.NewInmemSink(time.Hour, time.Hour)
	cfg := metrics.DefaultConfig("nomad")
	cfg.EnableHostname = false
	_, err := metrics.NewGlobal(cfg, inm)
	must.NoError(t, err)
	t.Cleanup(func() { _, _ = metrics.NewGlobal(metrics.DefaultConfig(""), &metrics.BlackholeSink{}) })

	a := warnAlloc(10*time.Second, 4*time.Second)
	a.CreateTime = time.Now().Add(-7 * time.Second).UnixNano()
	h1, r1 := startHook(t, a)
	must.SliceLen(t, 1, r1.sent(), must.Sprint("overdue warning sent at Prerun"))
	h1.Shutdown()
	r2 := &fakeRunner{alloc: a, states: r1.TaskStates()}
	h2 := newMaxRunDurationHook(r2).(*maxRunDurationHook)
	must.NoError(t, h2.Prerun())
	h2.Shutdown()

	key := "nomad.client.allocs.max_run_duration.warnings_total;namespace=" + a.Namespace + ";job=" + a.JobID + ";task_group=" + a.TaskGroup
	var got float64
	for _, iv := range inm.Data() {
		if c, ok := iv.Counters[key]; ok {
			got += c.Sum
		}
	}
	must.Eq(t, 1.0, got)
}

func TestDecideMaxRunWarning(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	deadline := now.Add(10 * time.Second)
	plan := func(warnIn time.Duration, remaining time.Duration) MaxRunPlan {
		return MaxRunPlan{Armed: true, Configured: time.Minute, Deadline: deadline, Remaining: remaining, WarnAt: now.Add(warnIn), WarnSignal: "SIGUSR1"}
	}
	armedAt := func(warnIn time.Duration, sent bool) MaxRunState {
		return MaxRunState{warnAt: now.Add(warnIn), warnSignal: "SIGUSR1", warnSent: sent}
	}
	never := func(time.Time) bool { return false }
	always := func(time.Time) bool { return true }
	cases := []struct {
		name   string
		cur    MaxRunState
		plan   MaxRunPlan
		sent   func(time.Time) bool
		next   MaxRunState
		action MaxRunWarnAction
	}{
		{"ahead arms", MaxRunState{}, plan(4*time.Second, 10*time.Second), never, armedAt(4*time.Second, false), MaxRunWarnArm},
		{"due now sends", MaxRunState{}, plan(0, 10*time.Second), never, armedAt(0, true), MaxRunWarnSend},
		{"past sends late", MaxRunState{}, plan(-time.Second, 10*time.Second), never, armedAt(-time.Second, true), MaxRunWarnSend},
		{"sent before a restart settles", MaxRunState{}, plan(-time.Second, 10*time.Second), always, armedAt(-time.Second, true), MaxRunWarnSettle},
		{"deadline passed settles", MaxRunState{}, plan(-5*time.Second, -time.Second), never, armedAt(-5*time.Second, false), MaxRunWarnSettle},
		{"same warning keeps", armedAt(4*time.Second, false), plan(4*time.Second, 10*time.Second), never, armedAt(4*time.Second, false), MaxRunWarnKeep},
		{"moved later re-arms", armedAt(-time.Second, true), plan(4*time.Second, 10*time.Second), never, armedAt(4*time.Second, false), MaxRunWarnArm},
		{"new signal, same time, stays sent", armedAt(-time.Second, true), MaxRunPlan{Armed: true, Deadline: deadline, Remaining: 10 * time.Second, WarnAt: now.Add(-time.Second), WarnSignal: "SIGUSR2"}, never,
			MaxRunState{warnAt: now.Add(-time.Second), warnSignal: "SIGUSR2", warnSent: true}, MaxRunWarnSettle},
		{"no warning disarms", armedAt(4*time.Second, false), MaxRunPlan{Armed: true, Deadline: deadline, Remaining: 10 * time.Second}, never, MaxRunState{}, MaxRunWarnDisarm},
		{"no deadline disarms", armedAt(4*time.Second, false), MaxRunPlan{}, never, MaxRunState{}, MaxRunWarnDisarm},
		{"nothing keeps", MaxRunState{}, MaxRunPlan{}, never, MaxRunState{}, MaxRunWarnKeep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, action := DecideMaxRunWarning(c.cur, c.plan, now, c.sent)
			must.Eq(t, c.action, action)
			must.EqOp(t, c.next, next)
		})
	}
}
