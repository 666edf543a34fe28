package nomad

import (
	"bytes"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/blockedevals"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/nomad/fsm"
	"github.com/nomadq/nomadq/structs"
)

var serverSeq atomic.Int64

// testServer starts an in-memory (dev mode) server on free loopback ports
// and stops it when the test ends. cb may change the config first.
func testServer(t *testing.T, cb func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NodeName = fmt.Sprintf("server-%d", serverSeq.Add(1))
	cfg.DevMode = true
	cfg.RPCAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 0}
	cfg.SerfBindAddr = "127.0.0.1"
	cfg.SerfPort = 0
	cfg.NumSchedulers = 2
	cfg.RPCHoldTimeout = 10 * time.Second
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: cfg.NodeName, Level: hclog.Warn, Output: testWriter{t}})
	if cb != nil {
		cb(cfg)
	}
	s, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { s.Shutdown() })
	return s
}

// clusterConfig makes a server one of n on-disk servers that join through
// join (a serf address) and fail over quickly.
func clusterConfig(t *testing.T, n int, join []string) func(*Config) {
	dir := t.TempDir()
	return func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
		c.BootstrapExpect = n
		c.RetryJoin = join
		c.RetryInterval = 100 * time.Millisecond
		c.RaftHeartbeatTimeout = 300 * time.Millisecond
		c.RaftElectionTimeout = 300 * time.Millisecond
		c.RaftLeaderLeaseTimeout = 150 * time.Millisecond
	}
}

// testWriter sends log lines to the test log, so they show only on failure.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// waitForLeader waits until exactly one of servers leads and all of them
// know it, and returns the leader.
func waitForLeader(t testing.TB, servers ...*Server) *Server {
	t.Helper()
	var leader *Server
	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			leader = nil
			for _, s := range servers {
				if s.IsLeader() {
					if leader != nil {
						return fmt.Errorf("two leaders: %s and %s", leader.config.NodeName, s.config.NodeName)
					}
					leader = s
				}
			}
			if leader == nil {
				return fmt.Errorf("no leader among %d servers", len(servers))
			}
			for _, s := range servers {
				if s.Leader() != leader.RPCAddr().String() {
					return fmt.Errorf("%s does not know the leader yet", s.config.NodeName)
				}
			}
			return nil
		}),
		wait.Timeout(20*time.Second),
		wait.Gap(20*time.Millisecond),
	))
	return leader
}

// waitForIndex waits until s has applied index.
func waitForIndex(t *testing.T, s *Server, index uint64) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			got, err := s.State().LatestIndex()
			if err != nil {
				return err
			}
			if got < index {
				return fmt.Errorf("%s at index %d, want %d", s.config.NodeName, got, index)
			}
			return nil
		}),
		wait.Timeout(10*time.Second),
		wait.Gap(10*time.Millisecond),
	))
}

// mockJob returns a valid batch job (mock.Job).
func mockJob(id string) *structs.Job { return mock.Job(id) }

// mockNode returns a ready node with 4000 MHz and 8 GiB (mock.Node).
func mockNode(id string) *structs.Node { return mock.Node(id) }

// testFSM returns an FSM whose leader structures are disabled, as on a
// follower.
func testFSM(t testing.TB) *fsm.FSM {
	t.Helper()
	broker, err := evalbroker.New(time.Minute, time.Second, time.Second, 3)
	must.NoError(t, err)
	f, err := fsm.New(hclog.NewNullLogger(), blockedevals.New(broker, hclog.NewNullLogger()), broker)
	must.NoError(t, err)
	return f
}

// apply encodes msg and applies it at index, returning the FSM's answer.
func apply(t *testing.T, f *fsm.FSM, index uint64, typ structs.MessageType, msg any) any {
	t.Helper()
	buf, err := structs.Encode(typ, msg)
	must.NoError(t, err)
	return f.Apply(&raft.Log{Index: index, Data: buf})
}

func mustApply(t *testing.T, f *fsm.FSM, index uint64, typ structs.MessageType, msg any) {
	t.Helper()
	if resp := apply(t, f, index, typ, msg); resp != nil {
		if err, ok := resp.(error); ok {
			t.Fatalf("apply %s at %d: %v", typ, index, err)
		}
	}
}

// memSink is a raft.SnapshotSink into a buffer.
type memSink struct {
	bytes.Buffer
	canceled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.canceled = true; return nil }
func (s *memSink) Close() error  { return nil }
