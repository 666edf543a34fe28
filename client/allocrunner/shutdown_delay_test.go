package allocrunner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// delayedAlloc is an alloc of a task that fails after a second beside one
// that runs for an hour, in a group with a shutdown_delay of a minute.
func delayedAlloc() *structs.Allocation {
	bad := mt("bad", map[string]any{"run_for": "1s", "exit_code": 2})
	other := mt("other", map[string]any{"run_for": "1h"})
	alloc := testAlloc(bad, other)
	alloc.Job.TaskGroups[0].ShutdownDelay = new(time.Minute)
	return alloc
}

// waitedFor is how long the task ran on between the group's shutdown
// delay event and its kill.
func waitedFor(t *testing.T, ts *structs.TaskState) time.Duration {
	t.Helper()
	wait, killing := find(ts, structs.TaskWaitingShuttingDownDelay), find(ts, structs.TaskKilling)
	must.NotNil(t, wait, must.Sprintf("no shutdown delay event: %v", types(ts)))
	must.NotNil(t, killing, must.Sprintf("no Killing event: %v", types(ts)))
	return time.Unix(0, killing.Time).Sub(time.Unix(0, wait.Time))
}

func TestAllocRunner_GroupShutdownDelayWhenSiblingFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ar, _ := newRunner(t, delayedAlloc())
		go ar.Run()
		<-ar.WaitCh()
		ts := ar.TaskStates()["other"]
		must.Eq(t, time.Minute, waitedFor(t, ts))
		must.NotNil(t, find(ts, structs.TaskSiblingFailed))
	})
}

func TestAllocRunner_GroupShutdownDelayOnDestroy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mt("main", map[string]any{"run_for": "1h"})
		alloc := testAlloc(main)
		alloc.Job.TaskGroups[0].ShutdownDelay = new(time.Minute)
		ar, _ := newRunner(t, alloc)
		go ar.Run()
		time.Sleep(time.Second)
		synctest.Wait()
		start := time.Now()
		ar.Destroy()
		must.Eq(t, time.Minute, time.Since(start))
		must.Eq(t, time.Minute, waitedFor(t, ar.TaskStates()["main"]))
	})
}

// A stop that arrives while a failed sibling's kill waits out the delay
// waits for the same delay, not a second one.
func TestAllocRunner_GroupShutdownDelayWaitedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := delayedAlloc()
		ar, _ := newRunner(t, alloc)
		go ar.Run()
		time.Sleep(30 * time.Second)
		stopped := *alloc
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		ar.Update(&stopped)
		<-ar.WaitCh()
		must.Eq(t, time.Minute, waitedFor(t, ar.TaskStates()["other"]))
	})
}

// alloc stop -no-shutdown-delay skips the group's and the task's delay.
func TestAllocRunner_NoShutdownDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mt("main", map[string]any{"run_for": "1h"})
		main.ShutdownDelay = time.Hour
		alloc := testAlloc(main)
		alloc.Job.TaskGroups[0].ShutdownDelay = new(time.Hour)
		ar, _ := newRunner(t, alloc)
		go ar.Run()
		time.Sleep(time.Second)
		synctest.Wait()
		start := time.Now()
		stopped := *alloc
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		stopped.DesiredTransition.NoShutdownDelay = new(true)
		ar.Update(&stopped)
		<-ar.WaitCh()
		must.Less(t, time.Minute, time.Since(start))
		ts := ar.TaskStates()["main"]
		must.Nil(t, find(ts, structs.TaskWaitingShuttingDownDelay), must.Sprintf("events: %v", types(ts)))
	})
}
