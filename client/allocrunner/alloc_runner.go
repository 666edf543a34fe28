// Package allocrunner runs one allocation: its hooks, its task runners in
// lifecycle order, kills in order, and the client status derived from
// the tasks.
package allocrunner

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/network"
	"github.com/nomadq/nomadq/client/state"
	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

// StateDB is where a runner persists; *state.DB is one.
type StateDB interface {
	taskrunner.Persister
	PutAlloc(a *structs.Allocation) error
	PutAllocRunnerState(allocID string, s *state.AllocRunnerState) error
	DeleteAlloc(allocID string) error
}

// Config builds an AllocRunner.
type Config struct {
	Alloc  *structs.Allocation
	Logger hclog.Logger
	State  StateDB
	// AllocDirRoot holds every alloc's directory.
	AllocDirRoot string
	// Drivers are the node's usable drivers by name.
	Drivers map[string]drivers.Driver
	Node    *structs.Node
	Region  string
	// OnUpdate receives the alloc's client-side view (ID, NodeID,
	// ClientStatus, ClientDescription, TaskStates) on every change.
	OnUpdate func(*structs.Allocation)
	// OnOOMKill is called each time the kernel kills a task of the alloc
	// for its memory limit.
	OnOOMKill func()
	// ExtraHooks run after the max_run_duration hook and before the
	// alloc dir hook.
	ExtraHooks []HookFactory
	// Restored is what an earlier client process persisted; nil for a
	// new alloc.
	Restored *state.AllocRecord
	// Variables reads Nomad Variables for the tasks' templates.
	Variables taskrunner.VariableSource
	// Network sets up the namespaces of bridge and cni network modes;
	// nil where the client cannot.
	Network *network.Manager
}

// KillAllOpts shape a whole-alloc kill decided by a hook.
type KillAllOpts struct {
	// DisplayMessage replaces the Killing event's display message of
	// every task that has not finished.
	DisplayMessage string
	// SkipPoststop: poststop tasks that have not started never start;
	// running ones are killed first, like the others.
	SkipPoststop bool
	// ClientStatus and ClientDescription, when set, are the alloc's
	// final status once every task is dead, whatever the exit codes.
	// The choice is persisted, so a client restart mid-kill keeps it.
	ClientStatus      string
	ClientDescription string
}

// AllocRunner runs one allocation.
type AllocRunner struct {
	cfg      Config
	logger   hclog.Logger
	allocDir *allocdir.AllocDir
	hooks    []RunnerHook

	mu          sync.Mutex
	alloc       *structs.Allocation
	runnerState state.AllocRunnerState
	tasks       map[string]*taskrunner.TaskRunner
	order       []*taskrunner.TaskRunner
	extraEnv    map[string]string
	// network is the alloc's own network, set by the network hook.
	network *networkState
	// stopping is set once a stop, destroy or KillAll has begun.
	stopping     bool
	skipPoststop bool
	shutdown     bool
	lastSent     string
	// siblingKilled marks runners killed because a sibling died.
	siblingKilled map[*taskrunner.TaskRunner]bool

	// delaySem is held (a token in it) for the whole of the group's
	// shutdown_delay, so a second kill path (a stop arriving while a
	// sibling's failure waits out the delay) waits for the first and then
	// kills at once: the delay is waited once per alloc, as in Nomad. A
	// channel, not a mutex, so that a waiting kill still sees shutdown.
	delaySem    chan struct{}
	delayWaited bool // guarded by delaySem

	changeCh   chan struct{}
	shutdownCh chan struct{}
	waitCh     chan struct{}
	shutOnce   sync.Once
}

// New returns an alloc runner; Run starts it.
func New(cfg Config) (*AllocRunner, error) {
	alloc := cfg.Alloc
	if alloc.Job == nil {
		return nil, fmt.Errorf("alloc %s has no job", alloc.ID)
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil, fmt.Errorf("alloc %s: job %q has no group %q", alloc.ID, alloc.JobID, alloc.TaskGroup)
	}
	ar := &AllocRunner{
		cfg:           cfg,
		logger:        cfg.Logger.Named("alloc_runner").With("alloc_id", alloc.ID),
		allocDir:      allocdir.New(cfg.AllocDirRoot, alloc.ID),
		alloc:         alloc,
		tasks:         make(map[string]*taskrunner.TaskRunner),
		extraEnv:      make(map[string]string),
		siblingKilled: make(map[*taskrunner.TaskRunner]bool),
		changeCh:      make(chan struct{}, 1),
		delaySem:      make(chan struct{}, 1),
		shutdownCh:    make(chan struct{}),
		waitCh:        make(chan struct{}),
	}
	if r := cfg.Restored; r != nil && r.Runner != nil {
		ar.runnerState = *r.Runner
		if k := r.Runner.Kill; k != nil {
			ar.stopping = true
			ar.skipPoststop = k.SkipPoststop
		}
	}
	for _, t := range tg.Tasks {
		trCfg := taskrunner.Config{
			Alloc:         alloc,
			Task:          t,
			AllocDir:      ar.allocDir,
			Driver:        cfg.Drivers[t.Driver],
			State:         cfg.State,
			Logger:        ar.logger,
			Node:          cfg.Node,
			Region:        cfg.Region,
			JobType:       alloc.Job.Type,
			ExtraEnv:      ar.taskEnv,
			Network:       ar.taskNetwork,
			OnStateChange: ar.notify,
			OnOOMKill:     cfg.OnOOMKill,
			Variables:     cfg.Variables,
		}
		if r := cfg.Restored; r != nil {
			trCfg.RestoredState = r.TaskStates[t.Name]
			trCfg.RestoredLocal = r.TaskLocal[t.Name]
		}
		tr := taskrunner.New(trCfg)
		ar.tasks[t.Name] = tr
		ar.order = append(ar.order, tr)
	}
	ar.hooks = ar.newHooks()
	return ar, nil
}

// ID returns the alloc's ID.
func (ar *AllocRunner) ID() string { return ar.cfg.Alloc.ID }

// Alloc returns the alloc as the servers last sent it.
func (ar *AllocRunner) Alloc() *structs.Allocation {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.alloc
}

// Logger is the runner's logger.
func (ar *AllocRunner) Logger() hclog.Logger { return ar.logger }

// ShuttingDown reports whether the client is shutting down.
func (ar *AllocRunner) ShuttingDown() bool {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return ar.shutdown
}

// SetTaskEnv adds a variable to the environment of tasks started later.
func (ar *AllocRunner) SetTaskEnv(key, value string) {
	ar.mu.Lock()
	ar.extraEnv[key] = value
	ar.mu.Unlock()
}

// UnsetTaskEnv removes a variable from the environment of tasks started
// later.
func (ar *AllocRunner) UnsetTaskEnv(key string) {
	ar.mu.Lock()
	delete(ar.extraEnv, key)
	ar.mu.Unlock()
}

func (ar *AllocRunner) taskEnv() map[string]string {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	return maps.Clone(ar.extraEnv)
}

// AllocDir returns the alloc's directory.
func (ar *AllocRunner) AllocDir() *allocdir.AllocDir { return ar.allocDir }

// TaskRunner returns the runner of a task, or nil.
func (ar *AllocRunner) TaskRunner(name string) *taskrunner.TaskRunner { return ar.tasks[name] }

// WaitCh is closed when Run has returned.
func (ar *AllocRunner) WaitCh() <-chan struct{} { return ar.waitCh }

func (ar *AllocRunner) notify() {
	select {
	case ar.changeCh <- struct{}{}:
	default:
	}
}

func (ar *AllocRunner) allDead() bool {
	for _, tr := range ar.order {
		if !tr.IsDead() {
			return false
		}
	}
	return true
}

// Run runs the alloc until every task is dead or the client shuts down.
func (ar *AllocRunner) Run() {
	defer close(ar.waitCh)
	alloc := ar.Alloc()
	if ar.allDead() {
		// Restored after it ended: report, nothing to run.
		ar.sendUpdate()
		ar.postrun()
		return
	}
	if alloc.TerminalStatus() {
		ar.stop()
	} else if err := ar.prerun(); err != nil {
		ar.logger.Error("prerun failed", "error", err)
		for _, tr := range ar.order {
			e := taskrunner.NewEvent(structs.TaskSetupFailure)
			e.SetupError = fmt.Sprintf("failed to setup alloc: %v", err)
			e.FailsTask = true
			tr.EmitEvent(e)
			tr.Kill(taskrunner.KillOpts{})
		}
	}
	for _, tr := range ar.order {
		go tr.Run()
	}
	if k := ar.restoredKill(); k != nil {
		// The previous client died mid-kill: finish the job.
		go ar.killTasks(ar.killSet(k.SkipPoststop), ar.killOpts(k.DisplayMessage))
	}
	for {
		ar.coordinate()
		ar.tasksChanged()
		ar.sendUpdate()
		if ar.allDead() {
			break
		}
		select {
		case <-ar.changeCh:
		case <-ar.shutdownCh:
			return
		}
	}
	for _, tr := range ar.order {
		<-tr.WaitCh()
	}
	ar.postrun()
	ar.sendUpdate()
}

func (ar *AllocRunner) prerun() error {
	for _, h := range ar.hooks {
		if p, ok := h.(PrerunHook); ok {
			if err := p.Prerun(); err != nil {
				return fmt.Errorf("prerun hook %q: %w", h.Name(), err)
			}
		}
	}
	return nil
}

func (ar *AllocRunner) postrun() {
	for _, h := range ar.hooks {
		if p, ok := h.(PostrunHook); ok {
			if err := p.Postrun(); err != nil {
				ar.logger.Warn("postrun hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
}

func isMain(t *structs.Task) bool {
	return t.Lifecycle == nil || t.Lifecycle.Hook == ""
}

// coordinate starts tasks whose lifecycle turn has come and kills the
// alloc's tasks when a leader died, a task failed, or only sidecars are
// left.
func (ar *AllocRunner) coordinate() {
	ar.mu.Lock()
	stopping, skipPoststop := ar.stopping, ar.skipPoststop
	ar.mu.Unlock()

	var killEvent *structs.TaskEvent
	hasMain, mainAllDead, mainAllStarted := false, true, true
	prestartDone := true
	var live []*taskrunner.TaskRunner
	for _, tr := range ar.order {
		t := tr.Task()
		st := tr.State()
		dead := st.State == structs.TaskStateDead
		if isMain(t) {
			hasMain = true
			if !dead {
				mainAllDead = false
			}
			if st.StartedAt.IsZero() {
				mainAllStarted = false
			}
		}
		if t.IsPrestart() {
			if t.IsSidecar() {
				if st.State != structs.TaskStateRunning && !dead {
					prestartDone = false
				}
			} else if !dead || st.Failed {
				prestartDone = false
			}
		}
		if t.IsPoststop() {
			continue
		}
		if !dead {
			live = append(live, tr)
			continue
		}
		if killEvent == nil && t.Leader {
			killEvent = taskrunner.NewEvent(structs.TaskLeaderDead)
		}
		if killEvent == nil && st.Failed {
			killEvent = taskrunner.NewEvent(structs.TaskSiblingFailed)
			killEvent.FailedSibling = t.Name
		}
	}
	if killEvent == nil && hasMain && mainAllDead && len(live) > 0 {
		onlySidecars := true
		for _, tr := range live {
			if !tr.Task().IsSidecar() {
				onlySidecars = false
			}
		}
		if onlySidecars {
			killEvent = taskrunner.NewEvent(structs.TaskMainDead)
		}
	}
	// A stop or KillAll under way already kills everything, in order and
	// with its own messages.
	if killEvent != nil && len(live) > 0 && !stopping {
		// Each runner gets one such kill; later changes must not pile up
		// events or kills.
		ar.mu.Lock()
		var toKill []*taskrunner.TaskRunner
		for _, tr := range live {
			if !ar.siblingKilled[tr] {
				ar.siblingKilled[tr] = true
				toKill = append(toKill, tr)
			}
		}
		ar.mu.Unlock()
		for _, tr := range toKill {
			e := *killEvent
			tr.EmitEvent(&e)
		}
		if len(toKill) > 0 {
			go func() {
				if ar.groupShutdownDelay(toKill) {
					ar.killTasks(toKill, ar.killOpts(""))
				}
			}()
		}
	}

	// Lifecycle gates. Starting an already started or killed runner is a
	// no-op. Once a stop or kill has begun only poststop tasks may still
	// start: a prestart task opened then would race its own kill.
	for _, tr := range ar.order {
		t := tr.Task()
		switch {
		case t.IsPrestart():
			if !stopping {
				tr.Start()
			}
		case isMain(t):
			if prestartDone && !stopping {
				tr.Start()
			}
		case t.IsPoststart():
			if mainAllStarted && !stopping {
				tr.Start()
			}
		case t.IsPoststop():
			if mainAllDead && !skipPoststop {
				tr.Start()
			}
		}
	}
}

// killTasks kills runners in Nomad's order: the leader first, then the
// other tasks together, sidecars last, each waiting for the previous
// step.
func (ar *AllocRunner) killTasks(runners []*taskrunner.TaskRunner, opts taskrunner.KillOpts) {
	step := func(pick func(*structs.Task) bool) {
		var picked []*taskrunner.TaskRunner
		for _, tr := range runners {
			if pick(tr.Task()) {
				picked = append(picked, tr)
			}
		}
		for _, tr := range picked {
			tr.Kill(opts)
		}
		for _, tr := range picked {
			<-tr.WaitCh()
		}
	}
	step(func(t *structs.Task) bool { return t.IsPoststop() })
	step(func(t *structs.Task) bool { return t.Leader && !t.IsPoststop() })
	step(func(t *structs.Task) bool { return !t.Leader && !t.IsSidecar() && !t.IsPoststop() })
	step(func(t *structs.Task) bool { return t.IsSidecar() && !t.IsPoststop() })
}

func (ar *AllocRunner) preKill() {
	for _, h := range ar.hooks {
		if p, ok := h.(PreKillHook); ok {
			p.PreKill()
		}
	}
}

// beginStop marks the alloc as stopping; false when it already was.
func (ar *AllocRunner) beginStop(skipPoststop bool, rec *state.KillRecord) bool {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.stopping || ar.shutdown {
		return false
	}
	ar.stopping = true
	ar.skipPoststop = skipPoststop
	if rec != nil {
		ar.runnerState.Kill = rec
	}
	return true
}

// persistKill saves the whole-alloc kill so a client restarted mid-kill
// reports the same outcome. It runs after the kill has started: a crash
// before the write loses nothing, because the hook that asked for the kill
// decides the same again on restore.
func (ar *AllocRunner) persistKill() {
	if ar.cfg.State == nil {
		return
	}
	ar.mu.Lock()
	s := ar.runnerState
	ar.mu.Unlock()
	if err := ar.cfg.State.PutAllocRunnerState(ar.cfg.Alloc.ID, &s); err != nil {
		ar.logger.Error("persist alloc runner state", "error", err)
	}
}

// stop kills every task because the servers stopped the alloc; poststop
// tasks still run afterwards.
func (ar *AllocRunner) stop() {
	if !ar.beginStop(false, nil) {
		return
	}
	ar.preKill()
	var runners []*taskrunner.TaskRunner
	for _, tr := range ar.order {
		if !tr.Task().IsPoststop() {
			runners = append(runners, tr)
		}
	}
	go func() {
		if ar.groupShutdownDelay(runners) {
			ar.killTasks(runners, ar.killOpts(""))
		}
	}()
	ar.notify()
}

// noShutdownDelay reports whether the servers asked to stop the alloc
// without its group and task shutdown_delay (alloc stop
// -no-shutdown-delay).
func (ar *AllocRunner) noShutdownDelay() bool {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	nd := ar.alloc.DesiredTransition.NoShutdownDelay
	return nd != nil && *nd
}

// killOpts are the task kill options of a whole-alloc kill.
func (ar *AllocRunner) killOpts(displayMessage string) taskrunner.KillOpts {
	return taskrunner.KillOpts{DisplayMessage: displayMessage, NoShutdownDelay: ar.noShutdownDelay()}
}

// groupShutdownDelay waits for the group's shutdown_delay before a
// whole-alloc kill, on every path that kills the alloc's tasks (a stop, a
// hook's KillAll, a failed sibling or leader, Destroy), as Nomad does
// after deregistering the group's services, and records the wait on each
// running task. The delay is waited once per alloc. It returns false
// when the client shut down meanwhile: the tasks then live on, and a
// later client finishes the kill.
func (ar *AllocRunner) groupShutdownDelay(runners []*taskrunner.TaskRunner) bool {
	var d time.Duration
	if j := ar.cfg.Alloc.Job; j != nil {
		if tg := j.LookupTaskGroup(ar.cfg.Alloc.TaskGroup); tg != nil && tg.ShutdownDelay != nil {
			d = *tg.ShutdownDelay
		}
	}
	if d <= 0 || ar.noShutdownDelay() {
		return true
	}
	select {
	case ar.delaySem <- struct{}{}:
	case <-ar.shutdownCh:
		return false
	}
	defer func() { <-ar.delaySem }()
	if ar.delayWaited {
		return true
	}
	running := false
	for _, tr := range runners {
		if tr.Started() && !tr.IsDead() {
			running = true
			e := taskrunner.NewEvent(structs.TaskWaitingShuttingDownDelay)
			e.DisplayMessage = fmt.Sprintf("Waiting for the group's shutdown_delay of %s before killing the task.", d)
			tr.EmitEvent(e)
		}
	}
	if !running {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		ar.delayWaited = true
		return true
	case <-ar.shutdownCh:
		return false
	}
}

// KillAll kills every task of the alloc for a hook (see Runner.KillAll).
func (ar *AllocRunner) KillAll(reason string, opts KillAllOpts) bool {
	if ar.allDead() {
		return false
	}
	rec := &state.KillRecord{
		Reason:            reason,
		DisplayMessage:    opts.DisplayMessage,
		ClientStatus:      opts.ClientStatus,
		ClientDescription: opts.ClientDescription,
		SkipPoststop:      opts.SkipPoststop,
		At:                time.Now(),
	}
	if !ar.beginStop(opts.SkipPoststop, rec) {
		return false
	}
	ar.logger.Debug("killing all tasks", "reason", reason)
	ar.preKill()
	go func() {
		set := ar.killSet(opts.SkipPoststop)
		if ar.groupShutdownDelay(set) {
			ar.killTasks(set, ar.killOpts(opts.DisplayMessage))
		}
	}()
	ar.persistKill()
	ar.notify()
	return true
}

// killSet is every runner, or every runner but the poststop ones (which
// then run once the others are dead).
func (ar *AllocRunner) killSet(withPoststop bool) []*taskrunner.TaskRunner {
	if withPoststop {
		return ar.order
	}
	var out []*taskrunner.TaskRunner
	for _, tr := range ar.order {
		if !tr.Task().IsPoststop() {
			out = append(out, tr)
		}
	}
	return out
}

// restoredKill is the whole-alloc kill an earlier client had begun.
func (ar *AllocRunner) restoredKill() *state.KillRecord {
	if ar.cfg.Restored == nil || ar.cfg.Restored.Runner == nil {
		return nil
	}
	return ar.cfg.Restored.Runner.Kill
}

// Update takes a new version of the alloc from the servers.
func (ar *AllocRunner) Update(alloc *structs.Allocation) {
	ar.mu.Lock()
	ar.alloc = alloc
	ar.mu.Unlock()
	if ar.cfg.State != nil {
		if err := ar.cfg.State.PutAlloc(alloc); err != nil {
			ar.logger.Error("persist alloc", "error", err)
		}
	}
	if alloc.TerminalStatus() {
		ar.stop()
		return
	}
	for _, h := range ar.hooks {
		if u, ok := h.(UpdateHook); ok {
			if err := u.Update(alloc); err != nil {
				ar.logger.Warn("update hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
}

// Shutdown stops the runner without killing tasks; a later client
// re-attaches to them.
func (ar *AllocRunner) Shutdown() {
	ar.shutOnce.Do(func() {
		ar.mu.Lock()
		ar.shutdown = true
		ar.mu.Unlock()
		close(ar.shutdownCh)
		for _, tr := range ar.order {
			tr.Shutdown()
		}
		for _, h := range ar.hooks {
			if s, ok := h.(ShutdownHook); ok {
				s.Shutdown()
			}
		}
	})
	<-ar.waitCh
}

// Destroy kills every task (poststop tasks that have not started never
// start), then removes the alloc dir and the alloc's state.
func (ar *AllocRunner) Destroy() {
	if ar.beginStop(true, nil) {
		ar.preKill()
		if ar.groupShutdownDelay(ar.order) {
			ar.killTasks(ar.order, ar.killOpts(""))
		}
	}
	<-ar.waitCh
	for _, h := range ar.hooks {
		if d, ok := h.(DestroyHook); ok {
			if err := d.Destroy(); err != nil {
				ar.logger.Warn("destroy hook failed", "hook", h.Name(), "error", err)
			}
		}
	}
	if ar.cfg.State != nil {
		if err := ar.cfg.State.DeleteAlloc(ar.cfg.Alloc.ID); err != nil {
			ar.logger.Warn("delete alloc state", "error", err)
		}
	}
}

// ClientStatus returns the alloc's client status and description, from
// its tasks as Nomad derives them, or from a KillAll's choice once every
// task is dead.
func (ar *AllocRunner) ClientStatus() (string, string) {
	states := ar.TaskStates()
	ar.mu.Lock()
	kill := ar.runnerState.Kill
	ar.mu.Unlock()
	if kill != nil && kill.ClientStatus != "" {
		for _, s := range states {
			if s.State != structs.TaskStateDead {
				return structs.AllocClientStatusRunning, "Tasks are running"
			}
		}
		return kill.ClientStatus, kill.ClientDescription
	}
	return ClientStatusFromTasks(states)
}

// ClientStatusFromTasks derives an alloc's client status from its task
// states: any failed task fails the alloc; else any running task makes
// it running, any pending task pending, and all dead complete.
func ClientStatusFromTasks(states map[string]*structs.TaskState) (string, string) {
	var pending, running, dead, failed bool
	for _, s := range states {
		switch s.State {
		case structs.TaskStateRunning:
			running = true
		case structs.TaskStatePending:
			pending = true
		case structs.TaskStateDead:
			if s.Failed {
				failed = true
			} else {
				dead = true
			}
		}
	}
	switch {
	case failed:
		return structs.AllocClientStatusFailed, "Failed tasks"
	case running:
		return structs.AllocClientStatusRunning, "Tasks are running"
	case pending:
		return structs.AllocClientStatusPending, "No tasks have started"
	case dead:
		return structs.AllocClientStatusComplete, "All tasks have completed"
	}
	return structs.AllocClientStatusPending, ""
}

// TaskStates returns a copy of every task's state.
func (ar *AllocRunner) TaskStates() map[string]*structs.TaskState {
	out := make(map[string]*structs.TaskState, len(ar.order))
	for _, tr := range ar.order {
		out[tr.Task().Name] = tr.State()
	}
	return out
}

// ClientAlloc returns the alloc's client-side view, as sent to servers.
func (ar *AllocRunner) ClientAlloc() *structs.Allocation {
	status, desc := ar.ClientStatus()
	a := ar.Alloc()
	return &structs.Allocation{
		ID:                a.ID,
		NodeID:            a.NodeID,
		Namespace:         a.Namespace,
		JobID:             a.JobID,
		TaskGroup:         a.TaskGroup,
		ClientStatus:      status,
		ClientDescription: desc,
		TaskStates:        ar.TaskStates(),
		NetworkStatus:     ar.networkStatus(),
	}
}

func (ar *AllocRunner) sendUpdate() {
	if ar.cfg.OnUpdate == nil {
		return
	}
	ca := ar.ClientAlloc()
	key := fingerprintUpdate(ca)
	ar.mu.Lock()
	same := key == ar.lastSent
	ar.lastSent = key
	ar.mu.Unlock()
	if !same {
		ar.cfg.OnUpdate(ca)
	}
}

// fingerprintUpdate summarises an update so unchanged ones are not sent.
func fingerprintUpdate(a *structs.Allocation) string {
	s := a.ClientStatus + "|" + a.ClientDescription
	names := slices.Sorted(maps.Keys(a.TaskStates))
	for _, name := range names {
		ts := a.TaskStates[name]
		s += fmt.Sprintf("|%s:%s:%d:%d:%v", name, ts.State, len(ts.Events), ts.Restarts, ts.Failed)
		if n := len(ts.Events); n > 0 {
			s += fmt.Sprintf(":%d", ts.Events[n-1].Time)
		}
	}
	return s
}
