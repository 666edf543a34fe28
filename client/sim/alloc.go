package sim

import (
	"fmt"
	"syscall"
	"time"

	"github.com/nomadq/nomadq/client/allocrunner"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

// maxEvents is how many events a task state keeps, as in Nomad.
const maxEvents = 10

// Task phases, in the order a group's lifecycle runs them.
const (
	phasePrestart = iota
	phaseMain
	phasePoststop
	phaseDone
)

// simAlloc is an alloc a simulated node runs. Only the scheduler
// goroutine touches it.
type simAlloc struct {
	n                 *node
	id, namespace     string
	jobID, taskGroup  string
	tasks             []*simTask
	phase             int
	killing           bool
	killStatus        string
	killDesc          string
	finished, removed bool
	// reported is set once the finished alloc's last view is queued
	// for the servers; its tasks are dropped then (see changed).
	reported bool
	// maxRun is the max_run_duration deadline in force, decided by the
	// real client's policy (allocrunner.DecideMaxRun); maxRunGen tells a
	// scheduled expiry that a later update disarmed or moved it.
	maxRun    allocrunner.MaxRunState
	maxRunGen uint64
}

// simTask is one task of a simulated alloc, run with mock_driver
// semantics: start_block_for, start_error, run_for, exit_code,
// exit_signal and kill_after, under the task's restart policy.
type simTask struct {
	a           *simAlloc
	name        string
	driver      string
	phase       int
	sidecar     bool
	main        bool // a main task (no lifecycle block)
	cfg         mock.Config
	cfgErr      error
	stopping    bool // killed, waiting to exit
	killTimeout time.Duration
	restart     *taskrunner.RestartTracker
	state       structs.TaskState
	// gen changes whenever a scheduled step of the task stops applying
	// (a kill, a removal); a step carries the gen it was scheduled at.
	gen uint64
}

// applyAlloc starts a new alloc on n, or acts on a change to one it runs
// (a stop). Scheduler goroutine only.
func (s *Sim) applyAlloc(n *node, a *structs.Allocation) {
	if sa := n.allocs[a.ID]; sa != nil {
		if a.DesiredStatus == structs.AllocDesiredStatusStop || a.DesiredStatus == structs.AllocDesiredStatusEvict {
			s.kill(sa, "", "", "")
			return
		}
		// An in-place update may change max_run_duration: re-arm or
		// disarm as the client's hook does.
		s.applyMaxRun(sa, a, time.Now())
		return
	}
	if a.ClientTerminalStatus() || (a.DesiredStatus != "" && a.DesiredStatus != structs.AllocDesiredStatusRun) {
		return
	}
	sa := &simAlloc{n: n, id: a.ID, namespace: a.Namespace, jobID: a.JobID, taskGroup: a.TaskGroup}
	var tg *structs.TaskGroup
	jobType := ""
	if a.Job != nil {
		tg = a.Job.LookupTaskGroup(a.TaskGroup)
		jobType = a.Job.Type
	}
	if n.allocs == nil {
		n.allocs = make(map[string]*simAlloc)
	}
	n.allocs[a.ID] = sa
	if tg == nil {
		// Nothing to run: the servers sent an alloc without its job.
		sa.killStatus, sa.killDesc = structs.AllocClientStatusFailed, fmt.Sprintf("task group %q of the allocation is unknown", a.TaskGroup)
		sa.finished = true
		s.sync.update(sa.n, s.clientAlloc(sa))
		return
	}
	now := time.Now()
	for _, t := range tg.Tasks {
		st := &simTask{a: sa, name: t.Name, driver: t.Driver, phase: phaseMain, main: true, killTimeout: taskrunner.KillTimeout(t)}
		if lc := t.Lifecycle; lc != nil {
			st.main = false
			st.sidecar = lc.Sidecar
			switch lc.Hook {
			case structs.TaskLifecycleHookPrestart:
				st.phase = phasePrestart
			case structs.TaskLifecycleHookPoststop:
				st.phase = phasePoststop
			}
		}
		if t.Driver == mock.Name {
			st.cfg, st.cfgErr = mock.ParseConfig(t.Config)
		}
		policy := taskrunner.DefaultRestartPolicy(jobType)
		if t.RestartPolicy != nil {
			policy = *t.RestartPolicy
		} else if tg.RestartPolicy != nil {
			policy = *tg.RestartPolicy
		}
		st.restart = taskrunner.NewRestartTracker(policy, jobType, now)
		st.state.State = structs.TaskStatePending
		appendEvent(&st.state, taskrunner.NewEvent(structs.TaskReceived))
		sa.tasks = append(sa.tasks, st)
	}
	s.applyMaxRun(sa, a, now)
	s.startPhase(sa, phasePrestart)
	s.changed(sa)
}

// startPhase starts the tasks of a lifecycle phase; a phase without
// tasks passes at once.
func (s *Sim) startPhase(sa *simAlloc, phase int) {
	sa.phase = phase
	if phase == phaseDone {
		return
	}
	for _, t := range sa.tasks {
		if t.phase == phase {
			s.startTask(t)
		}
	}
	s.advance(sa)
}

// startTask runs one attempt of a task.
func (s *Sim) startTask(t *simTask) {
	if t.driver != mock.Name {
		e := taskrunner.NewEvent(structs.TaskDriverFailure)
		e.DriverError = fmt.Sprintf("driver %q is not available on this simulated node: simulated nodes run mock_driver tasks only", t.driver)
		e.FailsTask = true
		s.taskDead(t, e)
		return
	}
	if t.cfgErr != nil {
		e := taskrunner.NewEvent(structs.TaskFailedValidation)
		e.ValidationError = t.cfgErr.Error()
		e.FailsTask = true
		s.taskDead(t, e)
		return
	}
	gen := t.gen
	begin := func() {
		if t.gen != gen {
			return
		}
		if t.cfg.StartError != "" {
			e := taskrunner.NewEvent(structs.TaskDriverFailure)
			e.DriverError = t.cfg.StartError
			appendEvent(&t.state, e)
			s.exited(t, &drivers.ExitResult{ExitCode: 1, Err: fmt.Errorf("%s", t.cfg.StartError)}, false)
			return
		}
		t.state.State = structs.TaskStateRunning
		t.state.StartedAt = time.Now()
		appendEvent(&t.state, taskrunner.NewEvent(structs.TaskStarted))
		s.changed(t.a)
		s.sched.after(t.cfg.RunFor, func() {
			if t.gen != gen {
				return
			}
			s.exited(t, &drivers.ExitResult{ExitCode: t.cfg.ExitCode, Signal: t.cfg.ExitSignal}, true)
		})
	}
	if t.cfg.StartBlockFor > 0 {
		s.sched.after(t.cfg.StartBlockFor, begin)
		return
	}
	begin()
}

// exited records the end of a run and applies the restart policy.
func (s *Sim) exited(t *simTask, res *drivers.ExitResult, ran bool) {
	if ran {
		term := taskrunner.NewEvent(structs.TaskTerminated)
		term.ExitCode, term.Signal = res.ExitCode, res.Signal
		appendEvent(&t.state, term)
	}
	if t.a.killing {
		s.taskDead(t, nil)
		return
	}
	restart, failed, delay, reason := t.restart.Next(time.Now(), res)
	switch {
	case restart:
		e := taskrunner.NewEvent(structs.TaskRestarting)
		e.RestartReason = reason
		e.StartDelay = int64(delay)
		t.state.Restarts++
		t.state.LastRestart = time.Now()
		t.state.State = structs.TaskStatePending
		appendEvent(&t.state, e)
		s.changed(t.a)
		gen := t.gen
		s.sched.after(delay, func() {
			if t.gen == gen {
				s.startTask(t)
			}
		})
	case failed:
		e := taskrunner.NewEvent(structs.TaskNotRestarting)
		e.RestartReason = reason
		e.FailsTask = true
		s.taskDead(t, e)
	default:
		s.taskDead(t, nil)
	}
}

// taskDead marks a task dead (with a last event) and moves its alloc on.
func (s *Sim) taskDead(t *simTask, e *structs.TaskEvent) {
	t.gen++
	if e != nil {
		appendEvent(&t.state, e)
	}
	t.state.State = structs.TaskStateDead
	t.state.FinishedAt = time.Now()
	a := t.a
	if t.state.Failed && !a.killing && (t.main || t.phase == phasePrestart && !t.sidecar) {
		// A failed main or prestart task takes its siblings down.
		a.killing = true
		s.killTasks(a, func(*simTask) *structs.TaskEvent {
			k := taskrunner.NewEvent(structs.TaskSiblingFailed)
			k.FailedSibling = t.name
			return k
		}, "")
	}
	s.advance(a)
	s.changed(a)
}

// advance starts the next phase once the current one is over.
func (s *Sim) advance(a *simAlloc) {
	for a.phase != phaseDone {
		switch a.phase {
		case phasePrestart:
			// Prestart tasks that are not sidecars must all end first.
			if !allDead(a, func(t *simTask) bool { return t.phase == phasePrestart && !t.sidecar }) {
				return
			}
			a.phase = phaseMain
			if a.killing || anyFailed(a) {
				a.killing = true
				s.killTasks(a, nil, "")
				continue
			}
			for _, t := range a.tasks {
				if t.phase == phaseMain {
					s.startTask(t)
				}
			}
		case phaseMain:
			if !allDead(a, func(t *simTask) bool { return t.main }) {
				return
			}
			// The main tasks are done: sidecars and poststart tasks
			// still running are told to stop.
			s.killTasks(a, func(*simTask) *structs.TaskEvent { return taskrunner.NewEvent(structs.TaskMainDead) }, "")
			if !allDead(a, func(t *simTask) bool { return t.phase != phasePoststop }) {
				return
			}
			a.phase = phasePoststop
			for _, t := range a.tasks {
				if t.phase == phasePoststop {
					s.startTask(t)
				}
			}
		case phasePoststop:
			if !allDead(a, func(*simTask) bool { return true }) {
				return
			}
			a.phase = phaseDone
			a.finished = true
		}
	}
}

// killTasks stops every task not yet dead or stopping, but poststop
// tasks, which run once the others are dead. A running task exits after
// kill_after, or is force killed at its kill_timeout; a task not started
// (or waiting to restart) never starts. reason, when set, gives an event
// to record first; killingMsg overrides the Killing event's message.
func (s *Sim) killTasks(a *simAlloc, reason func(*simTask) *structs.TaskEvent, killingMsg string) {
	for _, t := range a.tasks {
		if t.state.State == structs.TaskStateDead || t.stopping {
			continue
		}
		if t.phase == phasePoststop && a.phase < phasePoststop {
			continue
		}
		if reason != nil {
			appendEvent(&t.state, reason(t))
		}
		if t.state.State != structs.TaskStateRunning {
			s.taskDeadKilled(t, nil)
			continue
		}
		t.stopping = true
		t.gen++
		gen := t.gen
		k := taskrunner.NewEvent(structs.TaskKilling)
		k.KillTimeout = t.killTimeout
		k.DisplayMessage = killingMsg
		appendEvent(&t.state, k)
		res := &drivers.ExitResult{ExitCode: 128 + int(syscall.SIGINT), Signal: int(syscall.SIGINT)}
		wait := t.cfg.KillAfter
		if wait > t.killTimeout {
			wait = t.killTimeout
			res = &drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)}
		}
		s.sched.after(wait, func() {
			if t.gen != gen {
				return
			}
			s.taskDeadKilled(t, res)
		})
	}
}

// taskDeadKilled ends a killed task (res is its exit, nil if it never
// ran) with the Killed event.
func (s *Sim) taskDeadKilled(t *simTask, res *drivers.ExitResult) {
	if res != nil {
		term := taskrunner.NewEvent(structs.TaskTerminated)
		term.ExitCode, term.Signal = res.ExitCode, res.Signal
		appendEvent(&t.state, term)
	}
	t.gen++
	appendEvent(&t.state, taskrunner.NewEvent(structs.TaskKilled))
	t.state.State = structs.TaskStateDead
	t.state.FinishedAt = time.Now()
	s.advance(t.a)
	s.changed(t.a)
}

// kill stops a whole alloc (the servers stopped it, or max_run_duration
// ended it). status and desc, when set, are the alloc's client status
// and description once every task is dead; killingMsg, when set, is the
// display message of the Killing events.
func (s *Sim) kill(a *simAlloc, status, desc, killingMsg string) {
	if a.killing || a.finished || a.removed {
		return
	}
	a.killing = true
	a.killStatus, a.killDesc = status, desc
	s.killTasks(a, nil, killingMsg)
	// Poststop tasks run after a stop too, as Nomad runs them.
	s.advance(a)
	s.changed(a)
}

// applyMaxRun keeps an alloc's max_run_duration deadline in line with
// the alloc as the servers sent it, by the client hook's own policy:
// the first view arms it, an update that changes the duration moves it
// (or kills at once when it already passed), one that removes it
// disarms it. Scheduler goroutine only.
func (s *Sim) applyMaxRun(sa *simAlloc, a *structs.Allocation, now time.Time) {
	next, action, plan := allocrunner.DecideMaxRun(sa.maxRun, a, now)
	sa.maxRun = next
	switch action {
	case allocrunner.MaxRunDisarm:
		sa.maxRunGen++
	case allocrunner.MaxRunArm, allocrunner.MaxRunKill:
		// A deadline already passed (MaxRunKill) fires on the next
		// step, after the alloc's tasks are set up, as it always did.
		sa.maxRunGen++
		gen := sa.maxRunGen
		s.sched.at(plan.Deadline, func() {
			if sa.maxRunGen == gen {
				s.maxRunExpired(sa)
			}
		})
	}
}

// maxRunExpired kills an alloc whose max_run_duration passed, as the
// client's max_run_duration hook does.
func (s *Sim) maxRunExpired(a *simAlloc) {
	s.kill(a, structs.AllocClientStatusComplete, allocrunner.MaxRunDurationReason, allocrunner.MaxRunDurationReason)
}

// removeAlloc forgets an alloc the servers garbage collected.
func (s *Sim) removeAlloc(n *node, id string) {
	a := n.allocs[id]
	if a == nil {
		return
	}
	a.removed = true
	for _, t := range a.tasks {
		t.gen++
	}
	delete(n.allocs, id)
}

// changed queues the alloc's client view for the servers.
func (s *Sim) changed(a *simAlloc) {
	if a.removed || a.reported {
		return
	}
	s.sync.update(a.n, s.clientAlloc(a))
	if a.finished {
		// Nothing about a finished alloc changes again, and its last
		// view is on its way. Its tasks (states, events, restart
		// trackers: about 2 KB) go; the alloc stays known by its ID
		// until the servers collect it. A sim agent's heap is the
		// servers' heap too, and finished allocs pile up in it.
		a.reported = true
		a.tasks = nil
	}
}

// clientAlloc is the alloc's client view, as a real client sends it: a
// copy, since the tasks go on changing.
func (s *Sim) clientAlloc(a *simAlloc) *structs.Allocation {
	states := make(map[string]*structs.TaskState, len(a.tasks))
	for _, t := range a.tasks {
		st := t.state
		st.Events = append([]*structs.TaskEvent(nil), t.state.Events...)
		states[t.name] = &st
	}
	status, desc := allocrunner.ClientStatusFromTasks(states)
	if a.killStatus != "" && status != structs.AllocClientStatusRunning && status != structs.AllocClientStatusPending {
		status, desc = a.killStatus, a.killDesc
	}
	return &structs.Allocation{
		ID:                a.id,
		NodeID:            a.n.id,
		Namespace:         a.namespace,
		JobID:             a.jobID,
		TaskGroup:         a.taskGroup,
		ClientStatus:      status,
		ClientDescription: desc,
		TaskStates:        states,
		NetworkStatus:     &structs.AllocNetworkStatus{},
	}
}

func allDead(a *simAlloc, which func(*simTask) bool) bool {
	for _, t := range a.tasks {
		if which(t) && t.state.State != structs.TaskStateDead {
			return false
		}
	}
	return true
}

func anyFailed(a *simAlloc) bool {
	for _, t := range a.tasks {
		if t.state.Failed {
			return true
		}
	}
	return false
}

// appendEvent records e on ts, keeping the newest maxEvents in a fresh
// array so copies already sent never change.
func appendEvent(ts *structs.TaskState, e *structs.TaskEvent) {
	taskrunner.SetDisplayMessage(e)
	events := ts.Events
	if len(events) >= maxEvents {
		events = events[len(events)-maxEvents+1:]
	}
	ts.Events = append(append(make([]*structs.TaskEvent, 0, len(events)+1), events...), e)
	if e.FailsTask {
		ts.Failed = true
	}
}
