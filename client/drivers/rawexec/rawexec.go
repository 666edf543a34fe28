// Package rawexec runs a task as a plain process of the client's user,
// without isolation. Each run is owned by a small waiter process (the
// nomad binary re-executed, see MaybeRunWaiter) in its own session: the
// waiter starts the task in its own process group with stdout and stderr
// going straight into the alloc's log files, and records the exit status
// in the task dir. The task thus outlives the client, and a restarted
// client re-attaches by PID and reads the exit it missed.
package rawexec

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

// Name is the driver's name in a task's "driver" field.
const Name = "raw_exec"

// waiterStartTimeout bounds how long a waiter may take to start a task.
const waiterStartTimeout = 30 * time.Second

// Options configures the driver.
type Options struct {
	// Enabled turns the driver on; raw_exec is off unless the operator
	// enables it (client option "driver.raw_exec.enable").
	Enabled bool
	// Executable is the binary run as the waiter; "" means this process's
	// own executable.
	Executable string
}

// Driver is the raw_exec driver.
type Driver struct {
	opts  Options
	mu    sync.Mutex
	tasks map[string]*task
	// lastCPU remembers each task's previous CPU sample for percentages.
	lastCPU map[string]cpuSample
}

type cpuSample struct {
	ticks uint64
	at    time.Time
}

// handleState is what a client persists to re-attach to a run.
type handleState struct {
	Pid       int
	StartTime uint64
	WaiterPid int
	ExitFile  string
	Fifo      string
}

type task struct {
	state  handleState
	done   chan struct{}
	result *drivers.ExitResult
}

// New returns a raw_exec driver.
func New(opts Options) *Driver {
	return &Driver{opts: opts, tasks: make(map[string]*task), lastCPU: make(map[string]cpuSample)}
}

// Name returns "raw_exec".
func (d *Driver) Name() string { return Name }

// Fingerprint reports the driver detected and healthy only when enabled.
func (d *Driver) Fingerprint() *drivers.Fingerprint {
	if !d.opts.Enabled {
		return &drivers.Fingerprint{HealthDescription: "disabled"}
	}
	return &drivers.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy"}
}

type config struct {
	command string
	args    []string
}

func parse(m map[string]any) (config, error) {
	var c config
	if err := drivers.CheckKeys(Name, m, "command", "args"); err != nil {
		return c, err
	}
	cmd, ok, err := drivers.String(m, "command")
	if err != nil {
		return c, err
	}
	if !ok || cmd == "" {
		return c, &drivers.ValidationError{Err: errors.New(`raw_exec: missing required config key "command"`)}
	}
	c.command = cmd
	if c.args, err = drivers.Strings(m, "args"); err != nil {
		return c, err
	}
	return c, nil
}

// ValidateConfig checks for "command", "args" and nothing else.
func (d *Driver) ValidateConfig(cfg map[string]any) error {
	_, err := parse(cfg)
	return err
}

// StartTask launches a waiter that starts the task, and returns once the
// task's process exists.
func (d *Driver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	c, err := parse(tc.Config)
	if err != nil {
		return nil, err
	}
	exe := d.opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("raw_exec: find own executable for the waiter: %w", err)
		}
	}
	dir := filepath.Join(tc.TaskDir, ".rawexec")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("raw_exec: %w", err)
	}
	run := structs.GenerateUUID()[:8]
	spec := waiterSpec{
		Command:      c.command,
		Args:         c.args,
		Env:          buildEnv(tc.Env),
		Dir:          tc.TaskDir,
		StdoutPrefix: tc.StdoutPrefix(),
		StderrPrefix: tc.StderrPrefix(),
		MaxFiles:     tc.MaxFiles,
		MaxFileSize:  int64(tc.MaxFileSizeMB) << 20,
		ExitFile:     filepath.Join(dir, run+".exit"),
		Fifo:         filepath.Join(dir, run+".alive"),
	}
	if spec.MaxFiles < 1 {
		spec.MaxFiles = 1
	}
	specPath := filepath.Join(dir, run+".json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(specPath, b, 0o600); err != nil {
		return nil, fmt.Errorf("raw_exec: %w", err)
	}
	if err := syscall.Mkfifo(spec.Fifo, 0o600); err != nil {
		return nil, fmt.Errorf("raw_exec: create waiter fifo: %w", err)
	}
	wlog, err := os.OpenFile(filepath.Join(dir, "waiter.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("raw_exec: %w", err)
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
		return nil, fmt.Errorf("raw_exec: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("raw_exec: start waiter: %w", err)
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
		return nil, fmt.Errorf("raw_exec: %w", err)
	}
	if rep.Error != "" {
		return nil, fmt.Errorf("raw_exec: %s", rep.Error)
	}
	st := handleState{Pid: rep.Pid, StartTime: rep.StartTime, WaiterPid: cmd.Process.Pid, ExitFile: spec.ExitFile, Fifo: spec.Fifo}
	if err := d.attach(tc.ID, st); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(st)
	return &drivers.TaskHandle{Driver: Name, Config: tc, State: raw}, nil
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

// buildEnv is the client's environment with the task's on top, as Nomad
// gives raw_exec tasks.
func buildEnv(taskEnv map[string]string) []string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	for k, v := range taskEnv {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// attach starts watching a run: EOF on the waiter's fifo means the waiter
// is gone, and its exit file then holds the task's exit.
func (d *Driver) attach(id string, st handleState) error {
	f, err := os.OpenFile(st.Fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("raw_exec: open waiter fifo: %w", err)
	}
	t := &task{state: st, done: make(chan struct{})}
	d.mu.Lock()
	d.tasks[id] = t
	d.mu.Unlock()
	go func() {
		_, _ = io.Copy(io.Discard, f)
		f.Close()
		t.result = d.collect(st)
		close(t.done)
	}()
	return nil
}

// collect turns a finished waiter into the task's exit.
func (d *Driver) collect(st handleState) *drivers.ExitResult {
	rec, err := readExitFile(st.ExitFile)
	if err == nil {
		return &drivers.ExitResult{ExitCode: rec.ExitCode, Signal: rec.Signal}
	}
	// The waiter died without recording an exit (it was killed). Its task
	// can no longer be observed, so make sure it is gone.
	if alive(st.Pid, st.StartTime) {
		_ = syscall.Kill(-st.Pid, syscall.SIGKILL)
	}
	return &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("raw_exec: waiter of pid %d exited without recording the task's exit status", st.Pid)}
}

// alive reports whether pid is still the process that started at start.
func alive(pid int, start uint64) bool {
	got, err := processStartTime(pid)
	return err == nil && got == start
}

// RecoverTask re-attaches to a run started by an earlier client: by PID
// and start time when it still runs, by its exit file when it ended.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return errors.New("raw_exec: empty handle")
	}
	d.mu.Lock()
	_, ok := d.tasks[h.Config.ID]
	d.mu.Unlock()
	if ok {
		return nil
	}
	var st handleState
	if err := json.Unmarshal(h.State, &st); err != nil {
		return fmt.Errorf("raw_exec: decode handle: %w", err)
	}
	if st.Fifo == "" || st.Pid == 0 {
		return errors.New("raw_exec: handle has no process")
	}
	// The fifo tells whether the waiter still lives (the PID in the
	// handle is checked with its start time before any signal is sent);
	// the exit file tells how the task ended if it does not.
	if _, err := os.Stat(st.Fifo); err != nil {
		return fmt.Errorf("raw_exec: waiter of pid %d left no trace: %w", st.Pid, err)
	}
	return d.attach(h.Config.ID, st)
}

func (d *Driver) get(id string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tasks[id]
	if !ok {
		return nil, fmt.Errorf("raw_exec: %w: %s", drivers.ErrTaskNotFound, id)
	}
	return t, nil
}

// WaitTask yields the task's exit.
func (d *Driver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	t, err := d.get(id)
	if err != nil {
		return nil, err
	}
	ch := make(chan *drivers.ExitResult, 1)
	go func() {
		select {
		case <-t.done:
			ch <- t.result
		case <-ctx.Done():
		}
	}()
	return ch, nil
}

// StopTask signals the task's process group, and kills the group with
// SIGKILL if the task has not exited after timeout.
func (d *Driver) StopTask(id string, timeout time.Duration, signal string) error {
	t, err := d.get(id)
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
		return fmt.Errorf("raw_exec: signal pid %d: %w", t.state.Pid, err)
	}
	go func() {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-t.done:
		case <-timer.C:
			_ = syscall.Kill(-t.state.Pid, syscall.SIGKILL)
		}
	}()
	return nil
}

// DestroyTask kills what is left of the task's process group and forgets
// the task.
func (d *Driver) DestroyTask(id string) error {
	d.mu.Lock()
	t, ok := d.tasks[id]
	delete(d.tasks, id)
	delete(d.lastCPU, id)
	d.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-t.done:
	default:
		if alive(t.state.Pid, t.state.StartTime) {
			_ = syscall.Kill(-t.state.Pid, syscall.SIGKILL)
		}
	}
	return nil
}

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

// TaskStats measures every process of the task's process group.
func (d *Driver) TaskStats(id string) (*drivers.TaskUsage, error) {
	t, err := d.get(id)
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
	pids, sum := groupStats(t.state.Pid)
	u.Pids = pids
	u.RSS = sum.rssPages * uint64(os.Getpagesize())
	u.UserTicks = float64(sum.utime)
	u.SysTicks = float64(sum.stime)
	total := sum.utime + sum.stime
	d.mu.Lock()
	prev, ok := d.lastCPU[id]
	d.lastCPU[id] = cpuSample{ticks: total, at: now}
	d.mu.Unlock()
	if ok && now.After(prev.at) && total >= prev.ticks {
		secs := now.Sub(prev.at).Seconds()
		u.Percent = float64(total-prev.ticks) / clockTicks / secs * 100
	}
	u.Measured = append(u.Measured, "Percent", "System Mode", "User Mode", "Total Ticks")
	return u, nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
