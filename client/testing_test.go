package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/drivers/executor"
	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func TestMain(m *testing.M) {
	if executor.MaybeRun() {
		return
	}
	os.Exit(m.Run())
}

var serverSeq atomic.Int64

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// testServer starts a dev-mode server on loopback port 0.
func testServer(t testing.TB) *nomad.Server {
	t.Helper()
	cfg := nomad.DefaultConfig()
	cfg.NodeName = fmt.Sprintf("server-%d", serverSeq.Add(1))
	cfg.DevMode = true
	cfg.RPCAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 0}
	cfg.SerfBindAddr = "127.0.0.1"
	cfg.SerfPort = 0
	cfg.NumSchedulers = 2
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: cfg.NodeName, Level: hclog.Warn, Output: testWriter{t}})
	s, err := nomad.NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { s.Shutdown() })
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(s.IsLeader), wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)))
	return s
}

// partitionRPC fails every call while partitioned, as if the servers
// were unreachable.
type partitionRPC struct {
	inner RPC
	cut   atomic.Bool
}

var errPartitioned = errors.New("dial server: connection refused (test partition)")

func (p *partitionRPC) Call(ctx context.Context, method string, args, reply any) error {
	if p.cut.Load() {
		return errPartitioned
	}
	err := p.inner.Call(ctx, method, args, reply)
	if p.cut.Load() && err == nil {
		// A blocking query that began before the cut must not deliver.
		return errPartitioned
	}
	return err
}

// testClient starts a client of srv with raw_exec and mock_driver
// enabled, on dataDir ("" for a fresh one).
func testClient(t testing.TB, srv *nomad.Server, dataDir string, cb func(*Config)) *Client {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	cfg := Config{
		DataDir:  dataDir,
		NodeName: "client-" + structs.GenerateUUID()[:6],
		DevMode:  true,
		RPC:      InProcessRPC(srv),
		Logger:   hclog.New(&hclog.LoggerOptions{Name: "client", Level: hclog.Warn, Output: testWriter{t}}),
	}
	if cb != nil {
		cb(&cfg)
	}
	c, err := NewClient(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { c.Shutdown() })
	return c
}

// killPidsAtCleanup kills the process groups of raw_exec tasks whose
// PIDs the task wrote to files, so no test leaves processes behind.
type pidReaper struct {
	mu   sync.Mutex
	pids []int
}

func (r *pidReaper) add(pid int) {
	r.mu.Lock()
	r.pids = append(r.pids, pid)
	r.mu.Unlock()
}

func reaper(t testing.TB) *pidReaper {
	r := &pidReaper{}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, p := range r.pids {
			_ = syscall.Kill(-p, syscall.SIGKILL)
		}
	})
	return r
}

func batchJob(id string, tasks ...*structs.Task) *structs.Job {
	return &structs.Job{
		ID:          id,
		Name:        id,
		Namespace:   structs.DefaultNamespace,
		Region:      structs.DefaultRegion,
		Type:        structs.JobTypeBatch,
		Priority:    50,
		Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name:          "work",
			Count:         1,
			RestartPolicy: &structs.RestartPolicy{Attempts: 0, Interval: time.Minute, Delay: 50 * time.Millisecond, Mode: structs.RestartPolicyModeFail},
			Tasks:         tasks,
		}},
	}
}

func shTask(name, script string) *structs.Task {
	return &structs.Task{
		Name:      name,
		Driver:    "raw_exec",
		Config:    map[string]any{"command": "/bin/sh", "args": []any{"-c", script}},
		Resources: &structs.Resources{CPU: 20, MemoryMB: 16},
		LogConfig: &structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 5},
	}
}

func mockTask(name string, cfg map[string]any) *structs.Task {
	return &structs.Task{Name: name, Driver: "mock_driver", Config: cfg, Resources: &structs.Resources{CPU: 10, MemoryMB: 10}}
}

func register(t testing.TB, srv *nomad.Server, job *structs.Job) {
	t.Helper()
	var resp structs.JobRegisterResponse
	must.NoError(t, srv.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: structs.WriteRequest{Region: "global", Namespace: "default"}}, &resp))
}

func deregister(t testing.TB, srv *nomad.Server, jobID string) {
	t.Helper()
	var resp structs.JobDeregisterResponse
	must.NoError(t, srv.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: jobID, WriteRequest: structs.WriteRequest{Region: "global", Namespace: "default"}}, &resp))
}

// serverAlloc waits for the job's single alloc to satisfy ok on the
// server and returns it.
func serverAlloc(t testing.TB, srv *nomad.Server, jobID string, timeout time.Duration, ok func(*structs.Allocation) bool) *structs.Allocation {
	t.Helper()
	var got *structs.Allocation
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		allocs, err := srv.State().AllocsByJob(nil, "default", jobID, true)
		if err != nil {
			return err
		}
		if len(allocs) == 0 {
			return errors.New("no alloc yet")
		}
		got = allocs[0]
		if !ok(got) {
			return fmt.Errorf("alloc %s: client status %q, tasks %s", got.ID, got.ClientStatus, describeTasks(got.TaskStates))
		}
		return nil
	}), wait.Timeout(timeout), wait.Gap(10*time.Millisecond)))
	return got
}

func status(s string) func(*structs.Allocation) bool {
	return func(a *structs.Allocation) bool { return a.ClientStatus == s }
}

func describeTasks(ts map[string]*structs.TaskState) string {
	s := ""
	for name, st := range ts {
		s += fmt.Sprintf("[%s %s failed=%v restarts=%d:", name, st.State, st.Failed, st.Restarts)
		for _, e := range st.Events {
			s += fmt.Sprintf(" %s(%s)", e.Type, e.DisplayMessage)
		}
		s += "]"
	}
	return s
}

func eventTypes(ts *structs.TaskState) []string {
	var out []string
	for _, e := range ts.Events {
		out = append(out, e.Type)
	}
	return out
}

func findEvent(ts *structs.TaskState, typ string) *structs.TaskEvent {
	for _, e := range ts.Events {
		if e.Type == typ {
			return e
		}
	}
	return nil
}

func waitFile(t testing.TB, path string, ok func(string) bool) string {
	t.Helper()
	var content string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		content = string(b)
		if !ok(content) {
			return fmt.Errorf("%s: %q", path, content)
		}
		return nil
	}), wait.Timeout(15*time.Second), wait.Gap(10*time.Millisecond)))
	return content
}

func waitFor(f func() bool) *wait.Constraint {
	return wait.InitialSuccess(wait.BoolFunc(f), wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond))
}
