// Package mock is a driver that runs no processes: a task "runs" for a
// configured time and exits as configured, so tests and simulations can
// drive the client without forking.
package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
)

// Name is the driver's name in a task's "driver" field.
const Name = "mock_driver"

var configKeys = []string{"run_for", "exit_code", "exit_signal", "start_error", "start_block_for", "kill_after"}

// Driver is the mock driver.
type Driver struct {
	mu    sync.Mutex
	tasks map[string]*task
}

// New returns a mock driver.
func New() *Driver { return &Driver{tasks: make(map[string]*task)} }

type config struct {
	runFor, startBlockFor, killAfter time.Duration
	exitCode, exitSignal             int
	startError                       string
}

type task struct {
	cfg    config
	killCh chan killReq
	done   chan struct{}
	result *drivers.ExitResult
	once   sync.Once
}

type killReq struct {
	sig     syscall.Signal
	timeout time.Duration
}

// Name returns "mock_driver".
func (d *Driver) Name() string { return Name }

// Fingerprint reports the driver detected and healthy.
func (d *Driver) Fingerprint() *drivers.Fingerprint {
	return &drivers.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy"}
}

// ValidateConfig checks the config keys and their types.
func (d *Driver) ValidateConfig(cfg map[string]any) error {
	_, err := parse(cfg)
	return err
}

// Config is a task's mock_driver configuration, parsed.
type Config struct {
	RunFor, StartBlockFor, KillAfter time.Duration
	ExitCode, ExitSignal             int
	StartError                       string
}

// ParseConfig checks and parses a task's mock_driver config, as the
// driver does. Other node agents that simulate the driver (the node
// simulator) use it so a task behaves the same there.
func ParseConfig(m map[string]any) (Config, error) {
	c, err := parse(m)
	if err != nil {
		return Config{}, err
	}
	return Config{
		RunFor: c.runFor, StartBlockFor: c.startBlockFor, KillAfter: c.killAfter,
		ExitCode: c.exitCode, ExitSignal: c.exitSignal, StartError: c.startError,
	}, nil
}

func parse(m map[string]any) (config, error) {
	var c config
	if err := drivers.CheckKeys(Name, m, configKeys...); err != nil {
		return c, err
	}
	var err error
	if c.runFor, _, err = drivers.Duration(m, "run_for"); err != nil {
		return c, err
	}
	if c.startBlockFor, _, err = drivers.Duration(m, "start_block_for"); err != nil {
		return c, err
	}
	if c.killAfter, _, err = drivers.Duration(m, "kill_after"); err != nil {
		return c, err
	}
	if c.exitCode, _, err = drivers.Int(m, "exit_code"); err != nil {
		return c, err
	}
	if c.exitSignal, _, err = drivers.Int(m, "exit_signal"); err != nil {
		return c, err
	}
	if c.startError, _, err = drivers.String(m, "start_error"); err != nil {
		return c, err
	}
	return c, nil
}

// StartTask "starts" the task: it blocks for start_block_for, fails with
// start_error, or begins a run of run_for.
func (d *Driver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	c, err := parse(tc.Config)
	if err != nil {
		return nil, err
	}
	if c.startBlockFor > 0 {
		time.Sleep(c.startBlockFor)
	}
	if c.startError != "" {
		return nil, errors.New(c.startError)
	}
	t := &task{cfg: c, killCh: make(chan killReq, 1), done: make(chan struct{})}
	d.mu.Lock()
	d.tasks[tc.ID] = t
	d.mu.Unlock()
	go t.run()
	state, _ := json.Marshal(map[string]string{"id": tc.ID})
	return &drivers.TaskHandle{Driver: Name, Config: tc, State: state}, nil
}

func (t *task) run() {
	timer := time.NewTimer(t.cfg.runFor)
	defer timer.Stop()
	select {
	case <-t.done:
		return
	case <-timer.C:
		t.finish(&drivers.ExitResult{ExitCode: t.cfg.exitCode, Signal: t.cfg.exitSignal})
	case k := <-t.killCh:
		// The fake process honours the signal after kill_after; a longer
		// kill_after than the timeout means it is force killed.
		if t.cfg.killAfter > k.timeout {
			time.Sleep(k.timeout)
			t.finish(&drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)})
			return
		}
		if t.cfg.killAfter > 0 {
			time.Sleep(t.cfg.killAfter)
		}
		t.finish(&drivers.ExitResult{ExitCode: 128 + int(k.sig), Signal: int(k.sig)})
	}
}

func (t *task) finish(r *drivers.ExitResult) {
	t.once.Do(func() {
		t.result = r
		close(t.done)
	})
}

// RecoverTask always fails: a fake task does not outlive its client.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h != nil && h.Config != nil {
		if _, ok := d.tasks[h.Config.ID]; ok {
			return nil
		}
	}
	return errors.New("mock_driver: tasks cannot be recovered after a client restart")
}

func (d *Driver) get(id string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tasks[id]
	if !ok {
		return nil, fmt.Errorf("mock_driver: %w: %s", drivers.ErrTaskNotFound, id)
	}
	return t, nil
}

// WaitTask yields the task's exit.
func (d *Driver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	t, err := d.get(id)
	if err != nil {
		return nil, err
	}
	return drivers.WaitExit(ctx, t.done, func() *drivers.ExitResult { return t.result }), nil
}

// StopTask asks the fake process to exit.
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
	case t.killCh <- killReq{sig: sig, timeout: timeout}:
	default: // a kill is already under way
	}
	return nil
}

// DestroyTask forgets the task.
func (d *Driver) DestroyTask(id string) error {
	d.mu.Lock()
	t, ok := d.tasks[id]
	delete(d.tasks, id)
	d.mu.Unlock()
	if ok {
		t.finish(&drivers.ExitResult{Signal: int(syscall.SIGKILL), ExitCode: 128 + int(syscall.SIGKILL)})
	}
	return nil
}

// TaskStats reports zeros: there is no process to measure.
func (d *Driver) TaskStats(id string) (*drivers.TaskUsage, error) {
	if _, err := d.get(id); err != nil {
		return nil, err
	}
	return &drivers.TaskUsage{Timestamp: time.Now()}, nil
}
