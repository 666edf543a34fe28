package taskrunner

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

func TestRestartTracker(t *testing.T) {
	fail := &drivers.ExitResult{ExitCode: 1}
	ok := &drivers.ExitResult{}
	now := time.Unix(1000, 0)
	p := structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}

	r := newRestartTracker(p, structs.JobTypeBatch, now)
	d, _, _ := r.next(now, ok)
	must.Eq(t, decideDone, d) // batch: success ends the task

	r = newRestartTracker(p, structs.JobTypeService, now)
	d, delay, reason := r.next(now, ok)
	must.Eq(t, decideRestart, d) // service: success restarts too
	must.Eq(t, 15*time.Second, delay)
	must.Eq(t, ReasonWithinPolicy, reason)

	r = newRestartTracker(p, structs.JobTypeBatch, now)
	for i := 0; i < 2; i++ {
		d, _, _ = r.next(now, fail)
		must.Eq(t, decideRestart, d)
	}
	d, _, reason = r.next(now, fail)
	must.Eq(t, decideNoRestart, d)
	must.Eq(t, `Exceeded allowed attempts 2 in interval 1m0s and mode is "fail"`, reason)
	// A new interval starts the count again.
	d, _, _ = r.next(now.Add(2*time.Minute), fail)
	must.Eq(t, decideRestart, d)

	p.Mode = structs.RestartPolicyModeDelay
	r = newRestartTracker(p, structs.JobTypeBatch, now)
	r.next(now, fail)
	r.next(now, fail)
	d, delay, reason = r.next(now.Add(10*time.Second), fail)
	must.Eq(t, decideRestart, d)
	must.Eq(t, 50*time.Second, delay) // the rest of the interval
	must.Eq(t, ReasonDelay, reason)

	p.Attempts = 0
	r = newRestartTracker(p, structs.JobTypeBatch, now)
	d, _, reason = r.next(now, fail)
	must.Eq(t, decideNoRestart, d)
	must.Eq(t, ReasonNoRestartsAllowed, reason)
}

func TestInterpolate(t *testing.T) {
	node := &structs.Node{ID: "nid", Name: "n1", Datacenter: "dc9", NodeClass: "c", NodePool: "p",
		Attributes: map[string]string{"kernel.name": "linux"}, Meta: map[string]string{"rack": "r7"}}
	alloc := &structs.Allocation{ID: "aid", Name: "j.g[3]", TaskGroup: "g", Namespace: "default",
		Job: &structs.Job{ID: "j", Name: "j", Meta: map[string]string{"team": "core"}, TaskGroups: []*structs.TaskGroup{{Name: "g"}}}}
	task := &structs.Task{Name: "t", Env: map[string]string{"A": "${NOMAD_ALLOC_INDEX}-${attr.kernel.name}", "B": "x"}}
	e := BuildEnv(EnvInput{Alloc: alloc, Task: task, Node: node, Region: "r1"})
	cases := map[string]string{
		"${attr.kernel.name}":        "linux",
		"${node.unique.name}":        "n1",
		"${node.unique.id}":          "nid",
		"${node.datacenter}":         "dc9",
		"${node.class}/${node.pool}": "c/p",
		"${meta.rack}":               "r7",
		"${NOMAD_ALLOC_INDEX}":       "3",
		`${env["B"]}`:                "x",
		"${NOMAD_META_team}":         "core",
		"${NOMAD_REGION}":            "r1",
		"${attr.missing} ${":         "${attr.missing} ${",
		"plain":                      "plain",
	}
	for in, want := range cases {
		must.Eq(t, want, e.Interpolate(in), must.Sprint(in))
	}
	must.Eq(t, "3-linux", e.Env["A"])
	cfg := e.InterpolateConfig(map[string]any{"command": "${NOMAD_TASK_NAME}", "args": []any{"${meta.rack}", int64(3)}})
	must.Eq(t, map[string]any{"command": "t", "args": []any{"r7", int64(3)}}, cfg)
}

func runMock(t *testing.T, policy *structs.RestartPolicy, task *structs.Task) *TaskRunner {
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "j.g[0]", TaskGroup: "g", JobID: "j",
		Job: &structs.Job{ID: "j", Type: structs.JobTypeBatch, TaskGroups: []*structs.TaskGroup{{Name: "g", RestartPolicy: policy, Tasks: []*structs.Task{task}}}}}
	tr := New(Config{Alloc: alloc, Task: task, AllocDir: allocdir.New(t.TempDir(), alloc.ID), Driver: mock.New(),
		Logger: hclog.NewNullLogger(), JobType: structs.JobTypeBatch})
	go tr.Run()
	tr.Start()
	return tr
}

func TestTaskRunner_RestartDelayInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1s", "exit_code": 4}}
		tr := runMock(t, &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}, task)
		<-tr.WaitCh()
		st := tr.State()
		must.Eq(t, uint64(3), st.Restarts)
		must.True(t, st.Failed)
		// Four runs of 1s and three delays of 15s.
		must.Eq(t, 4*time.Second+45*time.Second, time.Since(start))
		var restarting int
		for _, e := range st.Events {
			if e.Type == structs.TaskRestarting {
				restarting++
				must.Eq(t, "Task restarting in 15s", e.DisplayMessage)
			}
		}
		must.Eq(t, 3, restarting) // Received, Task Setup and the first run fell off: ten events are kept
		must.Eq(t, maxEvents, len(st.Events))
		must.Eq(t, "Exit Code: 4", st.Events[8].DisplayMessage)
	})
}

func TestTaskRunner_KillAfterTimeoutIsForced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Name: "t", Driver: mock.Name, KillTimeout: 2 * time.Second,
			Config: map[string]any{"run_for": "1h", "kill_after": "10s"}}
		tr := runMock(t, nil, task)
		time.Sleep(time.Second)
		start := time.Now()
		tr.Kill(KillOpts{})
		<-tr.WaitCh()
		must.Eq(t, 2*time.Second, time.Since(start))
		st := tr.State()
		must.False(t, st.Failed)
		var term *structs.TaskEvent
		for _, e := range st.Events {
			if e.Type == structs.TaskTerminated {
				term = e
			}
		}
		must.Eq(t, "Exit Code: 137, Signal: 9", term.DisplayMessage)
		must.Eq(t, structs.TaskKilled, st.Events[len(st.Events)-1].Type)
	})
}

// A template that fails to render fails the attempt: the restart policy
// counts it, and the task fails with the message in its events once the
// attempts are used up.
func TestTaskRunner_PrestartFailureFollowsRestartPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1s"},
			Templates: []*structs.Template{{EmbeddedTmpl: `{{ key "cfg" }}`, DestPath: "local/cfg", LeftDelim: "{{", RightDelim: "}}"}}}
		tr := runMock(t, &structs.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeFail}, task)
		<-tr.WaitCh()
		st := tr.State()
		must.True(t, st.Failed)
		must.Eq(t, uint64(2), st.Restarts)
		must.True(t, st.StartedAt.IsZero()) // the driver never ran it
		must.Eq(t, 20*time.Second, time.Since(start))
		var types []string
		for _, e := range st.Events {
			types = append(types, e.Type)
			if e.Type == structs.TaskHookFailed {
				must.StrHasPrefix(t, "Template failed: local/cfg: execute: ", e.DisplayMessage)
				must.StrContains(t, e.DisplayMessage, "function key is not supported by nomadq")
			}
		}
		must.Eq(t, []string{structs.TaskReceived, structs.TaskSetup,
			structs.TaskHookFailed, structs.TaskRestarting,
			structs.TaskHookFailed, structs.TaskRestarting,
			structs.TaskHookFailed, structs.TaskNotRestarting}, types)
		must.Eq(t, `Exceeded allowed attempts 2 in interval 1h0m0s and mode is "fail"`, st.Events[len(st.Events)-1].DisplayMessage)
	})
}

// A task killed while it waits to retry a failed prestart hook ends
// without starting.
func TestTaskRunner_KillDuringPrestartRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1s"},
			Artifacts: []*structs.TaskArtifact{{GetterSource: "file:///nonexistent/x", GetterMode: "file", RelativeDest: "local/x"}}}
		tr := runMock(t, &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Minute, Mode: structs.RestartPolicyModeFail}, task)
		synctest.Wait() // the runner waits out the restart delay
		tr.Kill(KillOpts{})
		<-tr.WaitCh()
		st := tr.State()
		must.Eq(t, structs.TaskStateDead, st.State)
		must.True(t, st.StartedAt.IsZero())
		must.Eq(t, uint64(1), st.Restarts)
		var failed *structs.TaskEvent
		for _, e := range st.Events {
			if e.Type == structs.TaskArtifactDownloadFailed {
				failed = e
			}
		}
		must.NotNil(t, failed)
		must.Eq(t, `failed to download artifact "file:///nonexistent/x": file source "/nonexistent/x" is outside the allocation directory`, failed.DisplayMessage)
	})
}

// emittingDriver is the mock driver with a start that reports what it
// does, as the docker driver reports an image pull.
type emittingDriver struct{ *mock.Driver }

func (d emittingDriver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	tc.EmitEvent("Downloading image", map[string]string{"image": "example/app:1"})
	tc.EmitEvent("Image example/app:1 pulled", nil)
	return d.Driver.StartTask(tc)
}

// A driver's messages become Nomad's "Driver" events, in order, before
// the task starts, shown with the driver's words and its annotations.
func TestTaskRunner_DriverMessagesAreEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1s"}}
		alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "j.g[0]", TaskGroup: "g", JobID: "j",
			Job: &structs.Job{ID: "j", Type: structs.JobTypeBatch, TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{task}}}}}
		tr := New(Config{Alloc: alloc, Task: task, AllocDir: allocdir.New(t.TempDir(), alloc.ID),
			Driver: emittingDriver{mock.New()}, Logger: hclog.NewNullLogger(), JobType: structs.JobTypeBatch})
		go tr.Run()
		tr.Start()
		<-tr.WaitCh()
		st := tr.State()
		must.False(t, st.Failed)
		var types, shown []string
		for _, e := range st.Events {
			types = append(types, e.Type)
			shown = append(shown, e.DisplayMessage)
		}
		must.Eq(t, []string{structs.TaskReceived, structs.TaskSetup, structs.TaskDriverMessage, structs.TaskDriverMessage,
			structs.TaskStarted, structs.TaskTerminated}, types)
		must.Eq(t, "Downloading image", shown[2])
		must.Eq(t, "Image example/app:1 pulled", shown[3])
		must.Eq(t, "Downloading image", st.Events[2].DriverMessage)
		must.Eq(t, map[string]string{"image": "example/app:1"}, st.Events[2].Details)
	})
}

// flakyStart is a start error the driver marks recoverable.
type flakyStart struct{}

func (flakyStart) Error() string       { return "registry timed out" }
func (flakyStart) IsRecoverable() bool { return true }

// failingDriver fails its first starts with err, then starts as the mock.
type failingDriver struct {
	*mock.Driver
	fails int
	err   error
}

func (d *failingDriver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if d.fails > 0 {
		d.fails--
		return nil, d.err
	}
	return d.Driver.StartTask(tc)
}

// A start error the driver marks recoverable is retried as the restart
// policy allows; any other fails the task without a restart.
func TestTaskRunner_StartErrorRecoverable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		failed   bool
		restarts uint64
		types    []string
	}{
		{name: "recoverable", err: flakyStart{}, restarts: 1, types: []string{structs.TaskReceived, structs.TaskSetup,
			structs.TaskDriverFailure, structs.TaskRestarting, structs.TaskStarted, structs.TaskTerminated}},
		{name: "unrecoverable", err: errors.New("authentication failed"), failed: true, types: []string{structs.TaskReceived, structs.TaskSetup,
			structs.TaskDriverFailure, structs.TaskNotRestarting}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1s"}}
				alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "j.g[0]", TaskGroup: "g", JobID: "j",
					Job: &structs.Job{ID: "j", Type: structs.JobTypeBatch, TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{task}}}}}
				tr := New(Config{Alloc: alloc, Task: task, AllocDir: allocdir.New(t.TempDir(), alloc.ID),
					Driver: &failingDriver{Driver: mock.New(), fails: 1, err: tc.err}, Logger: hclog.NewNullLogger(), JobType: structs.JobTypeBatch})
				go tr.Run()
				tr.Start()
				<-tr.WaitCh()
				st := tr.State()
				must.Eq(t, tc.failed, st.Failed)
				must.Eq(t, tc.restarts, st.Restarts)
				var types []string
				for _, e := range st.Events {
					types = append(types, e.Type)
				}
				must.Eq(t, tc.types, types)
				must.Eq(t, tc.err.Error(), st.Events[2].DisplayMessage)
			})
		})
	}
}
