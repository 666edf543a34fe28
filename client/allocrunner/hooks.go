package allocrunner

import (
	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/structs"
)

// RunnerHook is a hook of the alloc runner. A hook implements any of the
// phase interfaces below; each is optional.
type RunnerHook interface {
	Name() string
}

// PrerunHook runs, in list order, before any task starts; the first error
// fails the alloc. It runs only for an alloc that is not terminal.
type PrerunHook interface {
	RunnerHook
	Prerun() error
}

// UpdateHook sees every update of a non-terminal alloc from the servers.
type UpdateHook interface {
	RunnerHook
	Update(alloc *structs.Allocation) error
}

// PreKillHook runs before the runner kills the alloc's tasks.
type PreKillHook interface {
	RunnerHook
	PreKill()
}

// PostrunHook runs once every task is dead, even if prerun never ran.
type PostrunHook interface {
	RunnerHook
	Postrun() error
}

// DestroyHook cleans up after the alloc is destroyed.
type DestroyHook interface {
	RunnerHook
	Destroy() error
}

// ShutdownHook runs when the client shuts down without killing tasks.
type ShutdownHook interface {
	RunnerHook
	Shutdown()
}

// Runner is what a hook may use of its alloc runner. Hooks get it at
// construction and never see the runner itself.
type Runner interface {
	// Alloc returns the alloc as the servers last sent it.
	Alloc() *structs.Allocation
	// KillAll kills every task of the alloc; see KillAllOpts. It returns
	// false, changing nothing, when the alloc is already being stopped or
	// killed, or when the client is shutting down. Once it returned true
	// no task that has not started yet ever starts.
	KillAll(reason string, opts KillAllOpts) bool
	// SetTaskEnv adds a variable to the environment of tasks started from
	// now on.
	SetTaskEnv(key, value string)
	// UnsetTaskEnv removes a variable from the environment of tasks
	// started from now on.
	UnsetTaskEnv(key string)
	// SignalTasks sends signal to every running task, recording reason on
	// each task's Signaling event, and returns how many it reached.
	SignalTasks(signal, reason string) int
	// TaskStates returns a copy of every task's state, restored ones
	// included.
	TaskStates() map[string]*structs.TaskState
	// ShuttingDown reports whether the client is shutting down.
	ShuttingDown() bool
	// Logger is the runner's logger.
	Logger() hclog.Logger
}

// HookFactory builds a hook for one alloc runner.
type HookFactory func(r Runner) RunnerHook

// newHooks builds the runner's hooks in the order they run, written out
// here rather than gathered from registrations so the order is read in one
// place:
//
//  1. max_run_duration, first, so its deadline is armed from the alloc's
//     CreateTime before any setup work (a slow alloc dir or artifact
//     counts against the deadline, as in Nomad);
//  2. the config's extra hooks (tests, simulated nodes);
//  3. the alloc dir, which builds the shared directories the tasks use;
//  4. the network, which gives a bridge or cni group its namespace.
func (ar *AllocRunner) newHooks() []RunnerHook {
	factories := append([]HookFactory{newMaxRunDurationHook}, ar.cfg.ExtraHooks...)
	var hooks []RunnerHook
	for _, f := range factories {
		if h := f(ar); h != nil {
			hooks = append(hooks, h)
		}
	}
	return append(hooks, &allocDirHook{ar: ar}, newNetworkHook(ar))
}

// allocDirHook builds the alloc's shared directories and removes the
// whole alloc dir on destroy.
type allocDirHook struct{ ar *AllocRunner }

func (h *allocDirHook) Name() string   { return "alloc_dir" }
func (h *allocDirHook) Prerun() error  { return h.ar.allocDir.Build() }
func (h *allocDirHook) Destroy() error { return h.ar.allocDir.Destroy() }
