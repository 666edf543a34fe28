package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
)

// WaiterArg is the hidden first argument that turns the nomad binary into
// a task's waiter. The name predates the exec driver; handles persisted by
// earlier clients name it, so it stays.
const WaiterArg = "raw-exec-waiter"

// InitArg is the hidden first argument that turns the nomad binary into a
// task's init step: it waits for the waiter to put it in the task's
// cgroup, isolates itself, and execs the task.
const InitArg = "task-init"

// waiterSpec tells a waiter what to run and where to record it.
type waiterSpec struct {
	Command      string
	Args         []string
	Env          []string
	Dir          string
	StdoutPrefix string
	StderrPrefix string
	MaxFileSize  int64
	MaxFiles     int
	// ExitFile receives the task's exitRecord, written atomically.
	ExitFile string
	// Fifo is held open by the waiter for as long as it lives, so a client
	// (even a later one) sees EOF on it exactly when the waiter is gone.
	Fifo string
	// Isolation, when set, makes the init step build namespaces and a
	// chroot around the task.
	Isolation *Isolation `json:",omitempty"`
	// Cgroup holds the paths of the cgroup the task runs in.
	Cgroup map[string]string `json:",omitempty"`
	// Network is the alloc's network namespace the task joins.
	Network *drivers.NetworkIsolation `json:",omitempty"`
}

// startReport is the one line a waiter writes on its stdout.
type startReport struct {
	Pid       int    `json:",omitempty"`
	StartTime uint64 `json:",omitempty"`
	Error     string `json:",omitempty"`
}

// exitRecord is the task's exit, as the waiter saw it.
type exitRecord struct {
	ExitCode int
	Signal   int
	Time     time.Time
}

// MaybeRun runs a task's waiter, init step or enter step and exits the process when
// the program was started as one (os.Args[1] is WaiterArg or InitArg);
// otherwise it returns false at once. Call it first thing in main, and in
// TestMain of test binaries that start raw_exec or exec tasks.
func MaybeRun() bool {
	if len(os.Args) < 3 {
		return false
	}
	switch os.Args[1] {
	case WaiterArg:
		os.Exit(runWaiter(os.Args[2]))
	case InitArg:
		os.Exit(runInit(os.Args[2]))
	case EnterArg:
		os.Exit(runEnter(os.Args[2], os.Args[3:]))
	}
	return false
}

// runWaiter owns one run of a task: it starts it in its own process
// group with its output going straight into the log files, reports the
// PID, rotates the logs, and records the exit status.
func runWaiter(specPath string) int {
	fail := func(err error) int {
		_ = json.NewEncoder(os.Stdout).Encode(startReport{Error: err.Error()})
		return 1
	}
	spec, err := readSpec(specPath)
	if err != nil {
		return fail(err)
	}
	// The client, or a later one, reads EOF on the fifo when this
	// process ends; O_RDWR keeps the open from blocking.
	fifo, err := os.OpenFile(spec.Fifo, os.O_RDWR, 0)
	if err != nil {
		return fail(err)
	}
	defer fifo.Close()

	// The waiter is in its own session, so terminal and group signals do
	// not reach it; catch the usual ones anyway rather than ignoring
	// them, because ignored signals would be inherited by the task.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)

	stdout, outIdx, err := openLog(spec.StdoutPrefix)
	if err != nil {
		return fail(err)
	}
	stderr, errIdx, err := openLog(spec.StderrPrefix)
	if err != nil {
		return fail(err)
	}
	cmd, err := startInit(specPath, spec, stdout, stderr)
	if err != nil {
		return fail(err)
	}
	pid := cmd.Process.Pid
	start, _ := processStartTime(pid)
	_ = json.NewEncoder(os.Stdout).Encode(startReport{Pid: pid, StartTime: start})
	os.Stdout.Close()

	done := make(chan struct{})
	if spec.MaxFileSize > 0 {
		rots := []*rotator{
			{prefix: spec.StdoutPrefix, idx: outIdx, f: stdout, maxSize: spec.MaxFileSize, maxFiles: spec.MaxFiles},
			{prefix: spec.StderrPrefix, idx: errIdx, f: stderr, maxSize: spec.MaxFileSize, maxFiles: spec.MaxFiles},
		}
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					for _, r := range rots {
						r.check()
					}
				}
			}
		}()
	}
	go func() {
		for range sigs {
		}
	}()

	rec := exitRecord{}
	err = cmd.Wait()
	close(done)
	rec.Time = time.Now()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Shells encode death by signal as 128+N; so does Nomad.
			rec.Signal = int(ws.Signal())
			rec.ExitCode = 128 + rec.Signal
		} else {
			rec.ExitCode = ee.ExitCode()
		}
	default:
		rec.ExitCode = -1
	}
	if err := writeExitFile(spec.ExitFile, rec); err != nil {
		fmt.Fprintf(os.Stderr, "raw-exec-waiter: %v\n", err)
		return 1
	}
	return 0
}

// readSpec reads the spec the client wrote for a run.
func readSpec(path string) (*waiterSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec waiterSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return &spec, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// writeExitFile writes rec to path atomically: a reader sees the whole
// record or none.
func writeExitFile(path string, rec exitRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readExitFile(path string) (*exitRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec exitRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}
