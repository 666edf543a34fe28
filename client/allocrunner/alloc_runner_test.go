package allocrunner

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

func testAlloc(tasks ...*structs.Task) *structs.Allocation {
	job := &structs.Job{ID: "j", Name: "j", Namespace: "default", Type: structs.JobTypeBatch,
		TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: tasks,
			RestartPolicy: &structs.RestartPolicy{Attempts: 0, Interval: time.Minute, Mode: structs.RestartPolicyModeFail}}}}
	return &structs.Allocation{ID: structs.GenerateUUID(), Name: "j.g[0]", Namespace: "default", JobID: "j", TaskGroup: "g", Job: job,
		DesiredStatus: structs.AllocDesiredStatusRun, CreateTime: time.Now().UnixNano()}
}

func mt(name string, cfg map[string]any) *structs.Task {
	return &structs.Task{Name: name, Driver: mock.Name, Config: cfg}
}

// recorder keeps the updates a runner sends.
type recorder struct {
	mu   sync.Mutex
	last *structs.Allocation
}

func (r *recorder) update(a *structs.Allocation) {
	r.mu.Lock()
	r.last = a
	r.mu.Unlock()
}

func newRunner(t *testing.T, alloc *structs.Allocation, hooks ...HookFactory) (*AllocRunner, *recorder) {
	return newRunnerWith(t, alloc, func(c *Config) { c.ExtraHooks = hooks })
}

// newRunnerWith is newRunner with the config changed by edit first.
func newRunnerWith(t *testing.T, alloc *structs.Allocation, edit func(*Config)) (*AllocRunner, *recorder) {
	rec := &recorder{}
	cfg := Config{
		Alloc:        alloc,
		Logger:       hclog.NewNullLogger(),
		AllocDirRoot: t.TempDir(),
		Drivers:      map[string]drivers.Driver{mock.Name: mock.New()},
		Node:         &structs.Node{ID: "n1", Name: "node1", Datacenter: "dc1"},
		Region:       "global",
		OnUpdate:     rec.update,
	}
	edit(&cfg)
	ar, err := New(cfg)
	must.NoError(t, err)
	return ar, rec
}

func TestAllocRunner_UnknownDriverFailsAlloc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := &structs.Task{Name: "main", Driver: "docker-ish", Config: map[string]any{}}
		ar, rec := newRunner(t, testAlloc(bad))
		go ar.Run()
		<-ar.WaitCh()
		st, _ := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusFailed, st)
		ts := ar.TaskStates()["main"]
		must.Eq(t, []string{"Received", "Task Setup", "Driver Failure"}, types(ts))
		must.StrContains(t, ts.Events[2].DisplayMessage, `unknown driver "docker-ish"`)
		must.Eq(t, structs.AllocClientStatusFailed, rec.last.ClientStatus)
	})
}

func TestAllocRunner_LeaderDeathKillsOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader := mt("leader", map[string]any{"run_for": "1s"})
		leader.Leader = true
		other := mt("other", map[string]any{"run_for": "1h"})
		ar, _ := newRunner(t, testAlloc(leader, other))
		go ar.Run()
		<-ar.WaitCh()
		ts := ar.TaskStates()
		must.Eq(t, []string{"Received", "Task Setup", "Started", "Leader Task Dead", "Killing", "Terminated", "Killed"}, types(ts["other"]))
		st, desc := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusComplete, st)
		must.Eq(t, "All tasks have completed", desc)
	})
}

func TestAllocRunner_FailedTaskKillsSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := mt("bad", map[string]any{"run_for": "1s", "exit_code": 2})
		other := mt("other", map[string]any{"run_for": "1h", "kill_after": "100ms"})
		ar, _ := newRunner(t, testAlloc(bad, other))
		go ar.Run()
		<-ar.WaitCh()
		ts := ar.TaskStates()
		e := ts["other"].Events[3]
		must.Eq(t, structs.TaskSiblingFailed, e.Type)
		must.Eq(t, `Task's sibling "bad" failed`, e.DisplayMessage)
		st, _ := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusFailed, st)
	})
}

// killHook is a stand-in for the max_run_duration hook: the first prerun
// hook, it kills the alloc through the Runner API after a delay.
type killHook struct {
	r     Runner
	after time.Duration
	done  chan bool
}

func (h *killHook) Name() string { return "test_kill" }

func (h *killHook) Prerun() error {
	h.r.SetTaskEnv("NOMAD_ALLOC_DEADLINE", "soon")
	time.AfterFunc(h.after, func() {
		h.done <- h.r.KillAll("deadline", KillAllOpts{
			DisplayMessage:    "allocation exceeded max_run_duration",
			SkipPoststop:      true,
			ClientStatus:      structs.AllocClientStatusComplete,
			ClientDescription: "allocation exceeded max_run_duration",
		})
	})
	return nil
}

func TestAllocRunner_KillAllSeam(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		leader := mt("leader", map[string]any{"run_for": "1h", "kill_after": "10ms", "exit_code": 1})
		leader.Leader = true
		worker := mt("worker", map[string]any{"run_for": "1h", "exit_code": 1})
		side := mt("side", map[string]any{"run_for": "1h"})
		side.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart, Sidecar: true}
		done := mt("done", map[string]any{"run_for": "1s"})
		done.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
		post := mt("post", map[string]any{"run_for": "1s"})
		post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
		hook := &killHook{after: 10 * time.Second, done: make(chan bool, 2)}
		ar, rec := newRunner(t, testAlloc(leader, worker, side, done, post), func(r Runner) RunnerHook {
			hook.r = r
			return hook
		})
		must.Eq(t, "max_run_duration", ar.hooks[0].Name()) // registered early hooks first
		must.Eq(t, "test_kill", ar.hooks[1].Name())        // then extra hooks, before alloc_dir
		must.Eq(t, "alloc_dir", ar.hooks[len(ar.hooks)-2].Name())
		must.Eq(t, "network", ar.hooks[len(ar.hooks)-1].Name())
		go ar.Run()
		must.True(t, <-hook.done)
		<-ar.WaitCh()
		must.False(t, ar.KillAll("again", KillAllOpts{})) // the loser changes nothing

		ts := ar.TaskStates()
		// A poststop task that never started: dead, no start, Received + Killing.
		must.Eq(t, []string{"Received", "Killing"}, types(ts["post"]))
		must.Eq(t, "allocation exceeded max_run_duration", ts["post"].Events[1].DisplayMessage)
		must.True(t, ts["post"].StartedAt.IsZero())
		for _, name := range []string{"leader", "worker", "side"} {
			k := find(ts[name], structs.TaskKilling)
			must.NotNil(t, k, must.Sprint(name))
			must.Eq(t, "allocation exceeded max_run_duration", k.DisplayMessage)
		}
		must.Nil(t, find(ts["done"], structs.TaskKilling)) // finished before: no new event
		// Leader first, sidecar last.
		must.True(t, ts["leader"].FinishedAt.Before(ts["worker"].FinishedAt) || ts["leader"].FinishedAt.Equal(ts["worker"].FinishedAt))
		must.False(t, ts["side"].FinishedAt.Before(ts["worker"].FinishedAt))
		st, desc := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusComplete, st)
		must.Eq(t, "allocation exceeded max_run_duration", desc)
		must.Eq(t, structs.AllocClientStatusComplete, rec.last.ClientStatus)
	})
}

func TestAllocRunner_ServerStopRunsPoststop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		main := mt("main", map[string]any{"run_for": "1h"})
		post := mt("post", map[string]any{"run_for": "1s"})
		post.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPoststop}
		alloc := testAlloc(main, post)
		ar, _ := newRunner(t, alloc)
		go ar.Run()
		time.Sleep(time.Minute)
		synctest.Wait()
		must.Eq(t, structs.TaskStateRunning, ar.TaskStates()["main"].State)
		must.Eq(t, structs.TaskStatePending, ar.TaskStates()["post"].State)
		stopped := *alloc
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		ar.Update(&stopped)
		<-ar.WaitCh()
		ts := ar.TaskStates()
		must.Eq(t, []string{"Received", "Task Setup", "Started", "Killing", "Terminated", "Killed"}, types(ts["main"]))
		must.Eq(t, "Sent interrupt. Waiting 5s before force killing", ts["main"].Events[3].DisplayMessage)
		must.Eq(t, []string{"Received", "Task Setup", "Started", "Terminated"}, types(ts["post"]))
		st, _ := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusComplete, st)
	})
}

func TestClientStatusFromTasks(t *testing.T) {
	dead := &structs.TaskState{State: structs.TaskStateDead}
	failed := &structs.TaskState{State: structs.TaskStateDead, Failed: true}
	running := &structs.TaskState{State: structs.TaskStateRunning}
	pending := &structs.TaskState{State: structs.TaskStatePending}
	cases := []struct {
		states map[string]*structs.TaskState
		want   string
	}{
		{map[string]*structs.TaskState{"a": pending}, structs.AllocClientStatusPending},
		{map[string]*structs.TaskState{"a": running, "b": pending}, structs.AllocClientStatusRunning},
		{map[string]*structs.TaskState{"a": dead, "b": dead}, structs.AllocClientStatusComplete},
		{map[string]*structs.TaskState{"a": failed, "b": running}, structs.AllocClientStatusFailed},
		{map[string]*structs.TaskState{"a": dead, "b": pending}, structs.AllocClientStatusPending},
	}
	for _, c := range cases {
		got, _ := ClientStatusFromTasks(c.states)
		must.Eq(t, c.want, got)
	}
}

func types(ts *structs.TaskState) []string {
	var out []string
	for _, e := range ts.Events {
		out = append(out, e.Type)
	}
	return out
}

func find(ts *structs.TaskState, typ string) *structs.TaskEvent {
	for _, e := range ts.Events {
		if e.Type == typ {
			return e
		}
	}
	return nil
}
