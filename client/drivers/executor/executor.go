// Package executor runs and supervises the processes of the process-based
// drivers (raw_exec, exec). Each run is owned by a small waiter process
// (the nomad binary re-executed, see MaybeRun) in its own session: the
// waiter starts the task through an init step in its own process group,
// optionally inside namespaces, a chroot and a cgroup, with stdout and
// stderr going straight into the alloc's log files, and records the exit
// status in the task dir. The task thus outlives the client, and a
// restarted client re-attaches by PID and reads the exit it missed.
package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// waiterStartTimeout bounds how long a waiter may take to start a task.
const waiterStartTimeout = 30 * time.Second

// Executor starts, tracks, stops and measures the runs of one driver.
// It is safe for concurrent use. Drivers embed it: its RecoverTask,
// WaitTask, StopTask, DestroyTask and TaskStats are theirs.
type Executor struct {
	// name prefixes errors and handles: the driver's name.
	name string
	// executable is the binary run as the waiter; "" means this process's
	// own executable.
	executable string

	mu    sync.Mutex
	tasks map[string]*task
	// lastCPU remembers each task's previous CPU sample for percentages.
	lastCPU map[string]cpuSample
}

type cpuSample struct {
	ticks float64
	at    time.Time
}

// handleState is what a client persists to re-attach to a run.
type handleState struct {
	Pid       int
	StartTime uint64
	WaiterPid int
	ExitFile  string
	Fifo      string
	// Cgroup holds the run's cgroup paths; empty when it has none.
	Cgroup map[string]string `json:",omitempty"`
}

type task struct {
	state  handleState
	cg     *taskCgroup
	done   chan struct{}
	result *drivers.ExitResult
}

// New returns an executor for the driver called name; executable is the
// binary to re-execute as the waiter ("" for this process's own).
func New(name, executable string) *Executor {
	return &Executor{name: name, executable: executable, tasks: make(map[string]*task), lastCPU: make(map[string]cpuSample)}
}

// Command is what to run for one task, beyond its TaskConfig.
type Command struct {
	Command string
	Args    []string
	// Env is the task's whole environment.
	Env []string
	// Isolation, when set, runs the task in namespaces and a chroot.
	Isolation *Isolation
	// Limits, when set, puts the task in a cgroup of its own.
	Limits *Limits
}

// Start launches a waiter that starts the task, and returns once the
// task's process exists.
func (e *Executor) Start(tc *drivers.TaskConfig, c Command) (*drivers.TaskHandle, error) {
	exe := e.executable
	var err error
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, e.errorf("find own executable for the waiter: %w", err)
		}
	}
	dir := filepath.Join(tc.TaskDir, ".executor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, e.errorf("%w", err)
	}
	run := structs.GenerateUUID()[:8]
	spec := waiterSpec{
		Command:      c.Command,
		Args:         c.Args,
		Env:          c.Env,
		Dir:          tc.TaskDir,
		StdoutPrefix: tc.StdoutPrefix(),
		StderrPrefix: tc.StderrPrefix(),
		MaxFiles:     tc.MaxFiles,
		MaxFileSize:  int64(tc.MaxFileSizeMB) << 20,
		ExitFile:     filepath.Join(dir, run+".exit"),
		Fifo:         filepath.Join(dir, run+".alive"),
		Isolation:    c.Isolation,
		Network:      tc.Network,
	}
	if spec.MaxFiles < 1 {
		spec.MaxFiles = 1
	}
	if tc.LogsDisabled {
		// The waiter hands the task /dev/null and writes no log file.
		spec.StdoutPrefix, spec.StderrPrefix, spec.MaxFileSize = "", "", 0
	}
	var cg *taskCgroup
	if c.Limits != nil {
		if cg, err = createCgroup(tc.ID, *c.Limits); err != nil {
			return nil, e.errorf("%w", err)
		}
		spec.Cgroup = cg.paths()
	}
	h, err := e.launch(exe, tc, dir, run, spec, cg)
	if err != nil && cg != nil {
		cg.destroy()
	}
	return h, err
}

func (e *Executor) launch(exe string, tc *drivers.TaskConfig, dir, run string, spec waiterSpec, cg *taskCgroup) (*drivers.TaskHandle, error) {
	specPath := filepath.Join(dir, run+".json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return nil, e.errorf("%w", err)
	}
	if err := syscall.Mkfifo(spec.Fifo, 0o600); err != nil {
		return nil, e.errorf("create waiter fifo: %w", err)
	}
	wlog, err := os.OpenFile(filepath.Join(dir, "waiter.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	defer wlog.Close()

	cmd := exec.Command(exe, WaiterArg, specPath)
	cmd.Dir = tc.TaskDir
	cmd.Stderr = wlog
	// A new session: signals to the client's process group or terminal
	// never reach the waiter or its task.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, e.errorf("%w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, e.errorf("start waiter: %w", err)
	}
	// One goroutine reads the report, then reaps the waiter whenever it
	// ends; the client learns of the end through the fifo, which works
	// for a waiter it did not start too.
	reports := make(chan reportResult, 1)
	go func() {
		br := bufio.NewReader(out)
		reports <- parseReport(br.ReadBytes('\n'))
		_, _ = io.Copy(io.Discard, br)
		_ = cmd.Wait()
	}()
	var rep *startReport
	select {
	case r := <-reports:
		rep, err = r.rep, r.err
	case <-time.After(waiterStartTimeout):
		err = errors.New("waiter did not start the task in time")
	}
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, e.errorf("%w", err)
	}
	if rep.Error != "" {
		return nil, e.errorf("%s", rep.Error)
	}
	st := handleState{Pid: rep.Pid, StartTime: rep.StartTime, WaiterPid: cmd.Process.Pid, ExitFile: spec.ExitFile, Fifo: spec.Fifo, Cgroup: spec.Cgroup}
	if err := e.attach(tc.ID, st, cg); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(st)
	return &drivers.TaskHandle{Driver: e.name, Config: tc, State: raw}, nil
}

func (e *Executor) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{e.name}, args...)...)
}

type reportResult struct {
	rep *startReport
	err error
}

func parseReport(line []byte, err error) reportResult {
	if err != nil && len(line) == 0 {
		return reportResult{err: fmt.Errorf("waiter exited before starting the task: %w", err)}
	}
	var rep startReport
	if err := json.Unmarshal(line, &rep); err != nil {
		return reportResult{err: fmt.Errorf("waiter report %q: %w", line, err)}
	}
	return reportResult{rep: &rep}
}

// attach starts watching a run: EOF on the waiter's fifo means the waiter
// is gone, and its exit file then holds the task's exit.
func (e *Executor) attach(id string, st handleState, cg *taskCgroup) error {
	f, err := os.OpenFile(st.Fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return e.errorf("open waiter fifo: %w", err)
	}
	t := &task{state: st, cg: cg, done: make(chan struct{})}
	e.mu.Lock()
	e.tasks[id] = t
	e.mu.Unlock()
	go func() {
		_, _ = io.Copy(io.Discard, f)
		f.Close()
		t.result = e.collect(t)
		close(t.done)
	}()
	return nil
}

// collect turns a finished waiter into the task's exit.
func (e *Executor) collect(t *task) *drivers.ExitResult {
	st := t.state
	rec, err := readExitFile(st.ExitFile)
	if err == nil {
		res := &drivers.ExitResult{ExitCode: rec.ExitCode, Signal: rec.Signal}
		// As in Nomad, a run is OOM killed when the kernel killed any of
		// its processes for the cgroup's memory limit, even one the task
		// survived; the cgroup's counter tells these kills apart from a
		// SIGKILL sent by anyone else.
		if t.cg != nil && t.cg.oomKilled() {
			res.OOMKilled = true
			res.Err = errors.New(drivers.OOMKilledMessage)
		}
		return res
	}
	// The waiter died without recording an exit (it was killed). Its task
	// can no longer be observed, so make sure it is gone.
	e.killAll(t)
	return &drivers.ExitResult{ExitCode: -1, Err: e.errorf("waiter of pid %d exited without recording the task's exit status", st.Pid)}
}

// killAll sends SIGKILL to every process of the run: the whole cgroup
// when it has one (nothing escapes by leaving the process group), else
// the process group.
func (e *Executor) killAll(t *task) {
	if t.cg != nil {
		t.cg.killAll()
	}
	if alive(t.state.Pid, t.state.StartTime) {
		_ = syscall.Kill(-t.state.Pid, syscall.SIGKILL)
	}
}

// alive reports whether pid is still the process that started at start.
func alive(pid int, start uint64) bool {
	got, err := processStartTime(pid)
	return err == nil && got == start
}

// RecoverTask re-attaches to a run started by an earlier client: by PID and
// start time when it still runs, by its exit file when it ended.
func (e *Executor) RecoverTask(h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return e.errorf("empty handle")
	}
	e.mu.Lock()
	_, ok := e.tasks[h.Config.ID]
	e.mu.Unlock()
	if ok {
		return nil
	}
	var st handleState
	if err := json.Unmarshal(h.State, &st); err != nil {
		return e.errorf("decode handle: %w", err)
	}
	if st.Fifo == "" || st.Pid == 0 {
		return e.errorf("handle has no process")
	}
	// The fifo tells whether the waiter still lives (the PID in the
	// handle is checked with its start time before any signal is sent);
	// the exit file tells how the task ended if it does not.
	if _, err := os.Stat(st.Fifo); err != nil {
		return e.errorf("waiter of pid %d left no trace: %w", st.Pid, err)
	}
	var cg *taskCgroup
	if len(st.Cgroup) > 0 {
		var err error
		if cg, err = loadCgroup(st.Cgroup); err != nil {
			return e.errorf("%w", err)
		}
	}
	return e.attach(h.Config.ID, st, cg)
}

func (e *Executor) get(id string) (*task, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.tasks[id]
	if !ok {
		return nil, e.errorf("%w: %s", drivers.ErrTaskNotFound, id)
	}
	return t, nil
}

// WaitTask yields the task's exit.
func (e *Executor) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	t, err := e.get(id)
	if err != nil {
		return nil, err
	}
	return drivers.WaitExit(ctx, t.done, func() *drivers.ExitResult { return t.result }), nil
}

// StopTask signals the task's process group, and kills every process of the
// run with SIGKILL if the task has not exited after timeout.
func (e *Executor) StopTask(id string, timeout time.Duration, signal string) error {
	t, err := e.get(id)
	if err != nil {
		return err
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return err
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	if !alive(t.state.Pid, t.state.StartTime) {
		return nil
	}
	if err := syscall.Kill(-t.state.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return e.errorf("signal pid %d: %w", t.state.Pid, err)
	}
	go func() {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-t.done:
		case <-timer.C:
			e.killAll(t)
		}
	}()
	return nil
}

// DestroyTask kills what is left of the run, removes its cgroup and forgets
// the task.
func (e *Executor) DestroyTask(id string) error {
	e.mu.Lock()
	t, ok := e.tasks[id]
	delete(e.tasks, id)
	delete(e.lastCPU, id)
	e.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-t.done:
		// The task is gone but processes it left (a daemon outside the
		// PID namespace's reach, as with raw_exec) may still be in its
		// cgroup.
		if t.cg != nil {
			t.cg.killAll()
		}
	default:
		e.killAll(t)
	}
	if t.cg != nil {
		t.cg.destroy()
	}
	return nil
}

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

// TaskStats measures the run's processes: from its cgroup when it has one,
// else from /proc for its process group.
func (e *Executor) TaskStats(id string) (*drivers.TaskUsage, error) {
	t, err := e.get(id)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	u := &drivers.TaskUsage{Timestamp: now, Measured: []string{"RSS"}}
	select {
	case <-t.done:
		return u, nil
	default:
	}
	if t.cg != nil {
		if err := t.cg.stats(u); err != nil {
			return nil, e.errorf("%w", err)
		}
	} else {
		pids, sum := groupStats(t.state.Pid)
		u.Pids = pids
		u.RSS = sum.rssPages * uint64(os.Getpagesize())
		u.UserTicks = float64(sum.utime)
		u.SysTicks = float64(sum.stime)
		u.TotalTicks = float64(sum.utime + sum.stime)
	}
	e.mu.Lock()
	prev, ok := e.lastCPU[id]
	e.lastCPU[id] = cpuSample{ticks: u.TotalTicks, at: now}
	e.mu.Unlock()
	if ok && now.After(prev.at) && u.TotalTicks >= prev.ticks {
		secs := now.Sub(prev.at).Seconds()
		u.Percent = (u.TotalTicks - prev.ticks) / clockTicks / secs * 100
	}
	u.Measured = append(u.Measured, "Percent", "System Mode", "User Mode", "Total Ticks")
	return u, nil
}
