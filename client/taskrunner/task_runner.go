// Package taskrunner runs one task of an allocation through a driver:
// setup, start, wait, restart per policy, and kill, recording Nomad's
// task events and persisting enough to re-attach after a client restart.
package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/state"
	"github.com/nomadq/nomadq/structs"
)

// DefaultKillTimeout is Nomad's kill_timeout when a task sets none.
const DefaultKillTimeout = 5 * time.Second

// Persister stores a task's state; *state.DB is one.
type Persister interface {
	PutTask(allocID, task string, ts *structs.TaskState, local *state.LocalTaskState) error
}

// Config builds a TaskRunner.
type Config struct {
	Alloc    *structs.Allocation
	Task     *structs.Task
	AllocDir *allocdir.AllocDir
	// Driver runs the task; nil when the node has no driver by the
	// task's driver name (the task then fails with a Driver Failure).
	Driver  drivers.Driver
	State   Persister
	Logger  hclog.Logger
	Node    *structs.Node
	Region  string
	JobType string
	// ExtraEnv returns variables alloc hooks add to the environment.
	ExtraEnv func() map[string]string
	// Network returns the alloc's network namespace, nil for the host's.
	Network func() *drivers.NetworkIsolation
	// OnStateChange is called after every change of the task's state.
	OnStateChange func()
	// OnOOMKill is called each time the kernel kills the task for its
	// memory limit.
	OnOOMKill func()

	// Variables answers templates' nomadVar and friends, read with the
	// task's workload identity; nil refuses them at render time.
	Variables VariableSource

	// RestoredState and RestoredLocal are what an earlier client process
	// persisted; nil for a new task.
	RestoredState *structs.TaskState
	RestoredLocal *state.LocalTaskState
}

// KillOpts shape a kill.
type KillOpts struct {
	// DisplayMessage overrides the Killing event's display message.
	DisplayMessage string
	// Reason sets the Killing event's KillReason.
	Reason string
	// NoShutdownDelay kills without waiting for the task's
	// shutdown_delay (alloc stop -no-shutdown-delay).
	NoShutdownDelay bool
}

// TaskRunner runs one task.
type TaskRunner struct {
	cfg     Config
	logger  hclog.Logger
	restart *restartTracker

	mu     sync.Mutex
	state  *structs.TaskState
	local  state.LocalTaskState
	runID  string // ID of the current run in the driver
	killed bool
	// noDelay: the kill skips the task's shutdown_delay.
	noDelay bool

	persistMu sync.Mutex

	startCh   chan struct{}
	startOnce sync.Once
	killCh    chan struct{}
	killOnce  sync.Once
	// restartFailure marks the restart asked on restartCh as a failure
	// (check_restart): the restart policy decides what follows. Guarded
	// by mu.
	restartFailure bool
	// restartCh asks the supervisor to stop the current run and start
	// the next at once (a user's restart).
	restartCh  chan struct{}
	shutdownCh chan struct{}
	shutOnce   sync.Once
	doneCh     chan struct{}

	// hooks prepare the task directory before each run.
	hooks []prestartHook
}

// New returns a task runner; Run starts it.
func New(cfg Config) *TaskRunner {
	tr := &TaskRunner{
		cfg:        cfg,
		logger:     cfg.Logger.Named("task_runner").With("task", cfg.Task.Name),
		startCh:    make(chan struct{}),
		killCh:     make(chan struct{}),
		restartCh:  make(chan struct{}, 1),
		shutdownCh: make(chan struct{}),
		doneCh:     make(chan struct{}),
		state:      &structs.TaskState{State: structs.TaskStatePending},
	}
	if cfg.RestoredState != nil {
		tr.state = cfg.RestoredState.Copy()
	} else {
		appendEvent(tr.state, NewEvent(structs.TaskReceived))
	}
	if cfg.RestoredLocal != nil {
		tr.local = *cfg.RestoredLocal
	}
	tr.hooks = []prestartHook{
		newArtifactHook(tr.EmitEvent),
		newTemplateHook(templateHookConfig{
			Vars:       cfg.Variables,
			Token:      cfg.Alloc.SignedIdentities[cfg.Task.Name],
			Region:     cfg.Region,
			Services:   serviceSource(cfg.Variables),
			NodeSecret: nodeSecret(cfg.Node),
			Control:    tr,
			Emit:       tr.EmitEvent,
			Stop:       []<-chan struct{}{tr.killCh, tr.shutdownCh, tr.doneCh},
		}),
	}
	policy := DefaultRestartPolicy(cfg.JobType)
	if cfg.Task.RestartPolicy != nil {
		policy = *cfg.Task.RestartPolicy
	} else if cfg.Alloc.Job != nil {
		if tg := cfg.Alloc.Job.LookupTaskGroup(cfg.Alloc.TaskGroup); tg != nil && tg.RestartPolicy != nil {
			policy = *tg.RestartPolicy
		}
	}
	tr.restart = newRestartTracker(policy, cfg.JobType, time.Now())
	return tr
}

// Task returns the task definition.
func (tr *TaskRunner) Task() *structs.Task { return tr.cfg.Task }

// State returns a copy of the task's state.
func (tr *TaskRunner) State() *structs.TaskState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state.Copy()
}

// WaitCh is closed when the runner is done: the task is dead, or the
// client shut down.
func (tr *TaskRunner) WaitCh() <-chan struct{} { return tr.doneCh }

// Start lets a runner waiting in Run start its task (lifecycle gate).
func (tr *TaskRunner) Start() { tr.startOnce.Do(func() { close(tr.startCh) }) }

// Shutdown stops supervising the task without killing it.
func (tr *TaskRunner) Shutdown() { tr.shutOnce.Do(func() { close(tr.shutdownCh) }) }

// IsDead reports whether the task is dead.
func (tr *TaskRunner) IsDead() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state.State == structs.TaskStateDead
}

// Started reports whether the task has ever started.
func (tr *TaskRunner) Started() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return !tr.state.StartedAt.IsZero()
}

// EmitEvent records an event without changing the task's state.
func (tr *TaskRunner) EmitEvent(e *structs.TaskEvent) {
	tr.mu.Lock()
	appendEvent(tr.state, e)
	tr.mu.Unlock()
	tr.changed()
}

func (tr *TaskRunner) killTimeout() time.Duration {
	if tr.cfg.Task.KillTimeout > 0 {
		return tr.cfg.Task.KillTimeout
	}
	return DefaultKillTimeout
}

// Kill kills the task with its kill_signal, escalating to SIGKILL after
// its kill_timeout, and returns at once; WaitCh closes when it is dead.
// A task that never started is marked dead and never starts. Only the
// first kill counts.
func (tr *TaskRunner) Kill(opts KillOpts) {
	tr.killOnce.Do(func() {
		tr.mu.Lock()
		tr.killed = true
		tr.noDelay = opts.NoShutdownDelay
		dead := tr.state.State == structs.TaskStateDead
		if !dead {
			e := NewEvent(structs.TaskKilling)
			e.KillTimeout = tr.killTimeout()
			e.KillReason = opts.Reason
			e.DisplayMessage = opts.DisplayMessage
			appendEvent(tr.state, e)
		}
		tr.mu.Unlock()
		if !dead {
			tr.changed()
		}
		close(tr.killCh)
	})
}

// Run runs the task until it is dead for good or the client shuts down.
func (tr *TaskRunner) Run() {
	defer close(tr.doneCh)
	tr.mu.Lock()
	dead := tr.state.State == structs.TaskStateDead
	handle := tr.local.Handle
	tr.mu.Unlock()
	if dead {
		return
	}
	if handle != nil {
		err := tr.recover(handle)
		if err == nil {
			if tr.supervise(handle.Config.ID) {
				tr.loop()
			}
			return
		}
		tr.logger.Warn("cannot re-attach to task; starting it again", "error", err)
		tr.setLocal(func(l *state.LocalTaskState) { l.Handle = nil })
	}
	select {
	case <-tr.startCh:
	case <-tr.killCh:
		tr.update(structs.TaskStateDead, nil, nil)
		return
	case <-tr.shutdownCh:
		return
	}
	setup := NewEvent(structs.TaskSetup)
	setup.Message = "Building Task Directory"
	tr.update("", setup, nil)
	if err := tr.cfg.AllocDir.BuildTask(tr.cfg.Task.Name); err != nil {
		e := NewEvent(structs.TaskSetupFailure)
		e.SetupError = err.Error()
		e.FailsTask = true
		tr.update(structs.TaskStateDead, e, nil)
		return
	}
	tr.loop()
}

// loop starts and supervises runs until the task is dead for good.
func (tr *TaskRunner) loop() {
	for {
		id, ok := tr.start()
		if !ok {
			return
		}
		if !tr.supervise(id) {
			return
		}
	}
}

func (tr *TaskRunner) recover(h *drivers.TaskHandle) error {
	if tr.cfg.Driver == nil {
		return fmt.Errorf("driver %q is not available", tr.cfg.Task.Driver)
	}
	if err := tr.cfg.Driver.RecoverTask(h); err != nil {
		return err
	}
	tr.mu.Lock()
	tr.runID = h.Config.ID
	tr.mu.Unlock()
	return nil
}

// start prepares and starts one run, trying again as the restart policy
// allows when a prestart hook fails; false means the task is dead.
func (tr *TaskRunner) start() (string, bool) {
	for {
		id, ok, retry := tr.tryStart()
		if !retry {
			return id, ok
		}
	}
}

// tryStart runs the prestart hooks, validates and starts one run; retry
// means a hook failed and the restart policy asks for another attempt.
func (tr *TaskRunner) tryStart() (id string, ok, retry bool) {
	select {
	case <-tr.killCh:
		tr.update(structs.TaskStateDead, nil, nil)
		return "", false, false
	default:
	}
	task := tr.cfg.Task
	if tr.cfg.Driver == nil {
		e := NewEvent(structs.TaskDriverFailure)
		e.DriverError = fmt.Sprintf("failed to start task: unknown driver %q: no such driver on this node", task.Driver)
		e.FailsTask = true
		tr.update(structs.TaskStateDead, e, nil)
		return "", false, false
	}
	mounts, err := taskMounts(tr.cfg.Alloc, task, tr.cfg.Node)
	if err != nil {
		tr.setupFailed(err)
		return "", false, false
	}
	vm, mounting := tr.cfg.Driver.(drivers.VolumeMounter)
	extra := volumeEnv(mounts, mounting && vm.MountsVolumes())
	if tr.cfg.ExtraEnv != nil {
		if extra == nil {
			extra = make(map[string]string)
		}
		maps.Copy(extra, tr.cfg.ExtraEnv())
	}
	env := BuildEnv(EnvInput{Alloc: tr.cfg.Alloc, Task: task, Node: tr.cfg.Node, Region: tr.cfg.Region, AllocDir: tr.cfg.AllocDir, Extra: extra})
	hookCtx, cancelHooks := tr.killContext()
	err = tr.runPrestartHooks(hookCtx, env)
	cancelHooks()
	if err != nil {
		select {
		case <-tr.killCh:
			// The hook failed because the task was killed under it.
			tr.update(structs.TaskStateDead, nil, nil)
			return "", false, false
		case <-tr.shutdownCh:
			return "", false, false
		default:
		}
		if tr.prestartFailed(err) {
			return "", false, true
		}
		return "", false, false
	}
	driverCfg := env.InterpolateConfig(task.Config)
	if err := tr.cfg.Driver.ValidateConfig(driverCfg); err != nil {
		tr.failValidation(err)
		return "", false, false
	}
	if err := writeDispatchPayload(tr.cfg.AllocDir, task, tr.cfg.Alloc); err != nil {
		tr.setupFailed(err)
		return "", false, false
	}
	if err := exposeWorkloadIdentity(tr.cfg.AllocDir, task, tr.cfg.Alloc, env.Env); err != nil {
		tr.setupFailed(err)
		return "", false, false
	}
	tr.mu.Lock()
	tr.local.Runs++
	runs := tr.local.Runs
	tr.mu.Unlock()
	tc := &drivers.TaskConfig{
		ID:        fmt.Sprintf("%s/%s/%d", tr.cfg.Alloc.ID, task.Name, runs),
		AllocID:   tr.cfg.Alloc.ID,
		Name:      task.Name,
		JobName:   tr.cfg.Alloc.JobID,
		TaskGroup: tr.cfg.Alloc.TaskGroup,
		User:      task.User,
		Config:    driverCfg,
		Env:       env.Env,
		TaskDir:   tr.cfg.AllocDir.TaskDir(task.Name),
		LogDir:    tr.cfg.AllocDir.LogDir(),
		Resources: taskResources(tr.cfg.Alloc, task.Name),
		Mounts:    mounts,
		MaxFiles:  10,
		// Nomad's defaults: ten files of 10 MB.
		MaxFileSizeMB: 10,
		Emit: func(message string, details map[string]string) {
			tr.EmitEvent(driverEvent(message, details))
		},
	}
	if lc := task.LogConfig; lc != nil {
		if lc.MaxFiles > 0 {
			tc.MaxFiles = lc.MaxFiles
		}
		if lc.MaxFileSizeMB > 0 {
			tc.MaxFileSizeMB = lc.MaxFileSizeMB
		}
		tc.LogsDisabled = lc.Disabled
	}
	if tr.cfg.Network != nil {
		tc.Network = tr.cfg.Network()
	}
	h, err := tr.cfg.Driver.StartTask(tc)
	if err != nil {
		var ve *drivers.ValidationError
		if errors.As(err, &ve) {
			tr.failValidation(err)
			return "", false, false
		}
		e := NewEvent(structs.TaskDriverFailure)
		e.DriverError = err.Error()
		tr.update("", e, nil)
		var rec recoverable
		if errors.As(err, &rec) && rec.IsRecoverable() {
			// Another attempt may succeed (a registry that timed out):
			// the restart policy decides, as for a failed run.
			return "", false, tr.applyRestartPolicy(&drivers.ExitResult{ExitCode: -1, Err: err})
		}
		nr := NewEvent(structs.TaskNotRestarting)
		nr.RestartReason = ReasonUnrecoverable
		nr.FailsTask = true
		tr.update(structs.TaskStateDead, nr, nil)
		return "", false, false
	}
	tr.mu.Lock()
	tr.runID = tc.ID
	tr.mu.Unlock()
	tr.update(structs.TaskStateRunning, NewEvent(structs.TaskStarted), func(l *state.LocalTaskState) { l.Handle = h })
	return tc.ID, true, false
}

// recoverable is implemented by a driver's start error that another
// attempt may not meet, as Nomad's drivers mark them; any other start
// error fails the task at once, since retrying it would fail the same way.
type recoverable interface {
	IsRecoverable() bool
}

func (tr *TaskRunner) failValidation(err error) {
	e := NewEvent(structs.TaskFailedValidation)
	e.ValidationError = err.Error()
	e.FailsTask = true
	tr.update(structs.TaskStateDead, e, nil)
}

// supervise waits for the run to end and applies the restart policy;
// true means start another run.
func (tr *TaskRunner) supervise(id string) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := tr.cfg.Driver.WaitTask(ctx, id)
	if err != nil {
		res := &drivers.ExitResult{ExitCode: -1, Err: err}
		return tr.exited(id, res, false)
	}
	var res *drivers.ExitResult
	killed := false
	select {
	case res = <-ch:
	case <-tr.shutdownCh:
		return false
	case <-tr.restartCh:
		if err := tr.cfg.Driver.StopTask(id, tr.killTimeout(), tr.cfg.Task.KillSignal); err != nil {
			tr.logger.Warn("stop task for restart", "error", err)
		}
		select {
		case res = <-ch:
		case <-tr.shutdownCh:
			return false
		}
		return tr.restarted(id, res)
	case <-tr.killCh:
		killed = true
		if res = tr.waitShutdownDelay(ch); res != nil {
			break
		}
		select {
		case <-tr.shutdownCh:
			return false
		default:
		}
		if err := tr.cfg.Driver.StopTask(id, tr.killTimeout(), tr.cfg.Task.KillSignal); err != nil {
			tr.logger.Warn("stop task", "error", err)
		}
		select {
		case res = <-ch:
		case <-tr.shutdownCh:
			return false
		}
	}
	return tr.exited(id, res, killed)
}

// waitShutdownDelay lets a task that is being killed run on for its
// shutdown_delay, as Nomad does, so that clients can stop sending it
// work first. It returns the exit when the task ends by itself in that
// time, nil when the delay passed or the client shuts down.
func (tr *TaskRunner) waitShutdownDelay(exit <-chan *drivers.ExitResult) *drivers.ExitResult {
	d := tr.cfg.Task.ShutdownDelay
	tr.mu.Lock()
	skip := tr.noDelay
	tr.mu.Unlock()
	if d <= 0 || skip {
		return nil
	}
	e := NewEvent(structs.TaskWaitingShuttingDownDelay)
	e.DisplayMessage = fmt.Sprintf("Waiting for shutdown_delay of %s before killing the task.", d)
	tr.EmitEvent(e)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case res := <-exit:
		return res
	case <-timer.C:
	case <-tr.shutdownCh:
	}
	return nil
}

func (tr *TaskRunner) exited(id string, res *drivers.ExitResult, killed bool) bool {
	tr.recordExit(id, res)

	tr.mu.Lock()
	killed = killed || tr.killed
	tr.mu.Unlock()
	if killed {
		tr.update(structs.TaskStateDead, NewEvent(structs.TaskKilled), nil)
		return false
	}
	return tr.applyRestartPolicy(res)
}

// applyRestartPolicy decides what follows a failed or ended attempt:
// true means start another run, after the policy's delay.
func (tr *TaskRunner) applyRestartPolicy(res *drivers.ExitResult) bool {
	d, delay, reason := tr.restart.next(time.Now(), res)
	switch d {
	case decideDone:
		tr.update(structs.TaskStateDead, nil, nil)
		return false
	case decideNoRestart:
		e := NewEvent(structs.TaskNotRestarting)
		e.RestartReason = reason
		e.FailsTask = true
		tr.update(structs.TaskStateDead, e, nil)
		return false
	}
	return tr.waitRestart(delay, reason)
}

// recordExit forgets the ended run and records its Terminated event.
func (tr *TaskRunner) recordExit(id string, res *drivers.ExitResult) {
	_ = tr.cfg.Driver.DestroyTask(id)
	term := NewEvent(structs.TaskTerminated)
	term.ExitCode = res.ExitCode
	term.Signal = res.Signal
	if res.Err != nil {
		term.Message = res.Err.Error()
	}
	if res.OOMKilled {
		// Nomad's detail key; the restart policy applies as to any exit.
		term.Details["oom_killed"] = "true"
		if tr.cfg.OnOOMKill != nil {
			tr.cfg.OnOOMKill()
		}
	}
	tr.update("", term, func(l *state.LocalTaskState) { l.Handle = nil })
}

// waitRestart records a Restarting event and waits out delay; true means
// start the next run.
func (tr *TaskRunner) waitRestart(delay time.Duration, reason string) bool {
	e := NewEvent(structs.TaskRestarting)
	e.RestartReason = reason
	e.StartDelay = int64(delay)
	tr.mu.Lock()
	tr.state.Restarts++
	tr.state.LastRestart = time.Now()
	tr.mu.Unlock()
	tr.update(structs.TaskStatePending, e, nil)
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-tr.killCh:
		tr.update(structs.TaskStateDead, nil, nil)
		return false
	case <-tr.shutdownCh:
		return false
	}
}

// killContext returns a context that ends when the task is killed or the
// client shuts down, so a long download does not hold either up.
func (tr *TaskRunner) killContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-tr.killCh:
		case <-tr.shutdownCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// update changes the state (when newState is not ""), records the event
// (when not nil) and the local state (when mutate is not nil), persists
// and notifies.
func (tr *TaskRunner) update(newState string, e *structs.TaskEvent, mutate func(*state.LocalTaskState)) {
	tr.persistMu.Lock()
	tr.mu.Lock()
	if e != nil {
		appendEvent(tr.state, e)
	}
	if newState != "" && newState != tr.state.State {
		now := time.Now()
		switch newState {
		case structs.TaskStateRunning:
			tr.state.StartedAt = now
			tr.state.FinishedAt = time.Time{}
		case structs.TaskStateDead:
			if !tr.state.StartedAt.IsZero() {
				tr.state.FinishedAt = now
			}
		}
		tr.state.State = newState
	}
	if mutate != nil {
		mutate(&tr.local)
	}
	ts := tr.state.Copy()
	var local *state.LocalTaskState
	if mutate != nil {
		l := tr.local
		local = &l
	}
	tr.mu.Unlock()
	if tr.cfg.State != nil {
		if err := tr.cfg.State.PutTask(tr.cfg.Alloc.ID, tr.cfg.Task.Name, ts, local); err != nil {
			tr.logger.Error("persist task state", "error", err)
		}
	}
	tr.persistMu.Unlock()
	tr.changed()
}

func (tr *TaskRunner) setLocal(mutate func(*state.LocalTaskState)) { tr.update("", nil, mutate) }

func (tr *TaskRunner) changed() {
	if tr.cfg.OnStateChange != nil {
		tr.cfg.OnStateChange()
	}
}

// Stats measures the running task; nil when it is not running.
func (tr *TaskRunner) Stats() (*drivers.TaskUsage, error) {
	tr.mu.Lock()
	id := tr.runID
	running := tr.state.State == structs.TaskStateRunning
	tr.mu.Unlock()
	if !running || id == "" || tr.cfg.Driver == nil {
		return nil, nil
	}
	return tr.cfg.Driver.TaskStats(id)
}

// taskResources is what the scheduler reserved for task, as drivers that
// enforce limits read it; nil when the alloc carries no reservation.
func taskResources(alloc *structs.Allocation, task string) *drivers.Resources {
	if alloc.AllocatedResources == nil {
		return nil
	}
	tr := alloc.AllocatedResources.Tasks[task]
	if tr == nil {
		return nil
	}
	return &drivers.Resources{
		CPUShares:   tr.Cpu.CpuShares,
		MemoryMB:    tr.Memory.MemoryMB,
		MemoryMaxMB: tr.Memory.MemoryMaxMB,
		Cores:       tr.Cpu.ReservedCores,
	}
}
