package nomad

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/fsm"
	"github.com/nomadq/nomadq/structs"
)

// onDiskConfig is an on-disk single server on dir that runs no
// schedulers (nothing writes but the test).
func onDiskConfig(dir string) func(*Config) {
	return func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
		c.BootstrapExpect = 1
		c.NumSchedulers = 0
	}
}

// waitFatal waits for s to stop on its own and returns why.
func waitFatal(t *testing.T, s *Server) error {
	t.Helper()
	select {
	case <-s.Fatal():
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop within 30 s")
	}
	err := s.FatalErr()
	must.ErrorIs(t, err, ErrServerStopped)
	must.ErrorIs(t, err, fsm.ErrCorruptEntry)
	must.True(t, s.isShutdown())
	return err
}

// TestServer_CorruptEntryOnDiskStopsReplay: a committed entry whose bytes
// were damaged on disk (raft-wal checks the CRC of the last batch only)
// stops the restarted server with a message naming the entry's index, its
// type and the segment file; the entries after it are not applied.
func TestServer_CorruptEntryOnDiskStopsReplay(t *testing.T) {
	dir := t.TempDir()
	s1 := testServer(t, onDiskConfig(dir))
	waitForLeader(t, s1)
	registerJob(t, s1, mockJob("before"))
	const marker = "corrupt-me-0123456789"
	idx := registerJob(t, s1, mockJob(marker)).Index
	for i := range 5 {
		registerJob(t, s1, mockJob(fmt.Sprintf("after-%d", i)))
	}
	must.NoError(t, s1.Shutdown())

	// Overwrite the msgpack header of the first copy of the marker (the
	// job ID) and what follows with a byte msgpack never uses.
	walDir := filepath.Join(dir, "server", "raft", "wal")
	segs, err := filepath.Glob(filepath.Join(walDir, "*.wal"))
	must.NoError(t, err)
	var seg string
	for _, name := range segs {
		buf, err := os.ReadFile(name)
		must.NoError(t, err)
		at := bytes.Index(buf, []byte(marker))
		if at < 0 {
			continue
		}
		copy(buf[at-1:], bytes.Repeat([]byte{0xc1}, 8))
		must.NoError(t, os.WriteFile(name, buf, 0o600))
		seg = name
		break
	}
	must.NotEq(t, "", seg, must.Sprint("marker not found in the WAL"))

	s2 := testServer(t, onDiskConfig(dir))
	err = waitFatal(t, s2)
	msg := err.Error()
	t.Log(msg)
	must.StrContains(t, msg, fmt.Sprintf("raft log entry at index %d (term ", idx))
	must.StrContains(t, msg, "JobRegisterRequestType body")
	must.StrContains(t, msg, "the Raft log segment "+seg)
	var cerr *fsm.CorruptEntryError
	must.True(t, errors.As(err, &cerr))
	must.Eq(t, idx, cerr.Index)

	st := s2.State()
	before, err := st.JobByID(nil, structs.DefaultNamespace, "before")
	must.NoError(t, err)
	must.NotNil(t, before)
	for i := range 5 {
		job, err := st.JobByID(nil, structs.DefaultNamespace, fmt.Sprintf("after-%d", i))
		must.NoError(t, err)
		must.Nil(t, job, must.Sprintf("after-%d applied past the corrupt entry", i))
	}
	latest, err := st.LatestIndex()
	must.NoError(t, err)
	must.Less(t, idx, latest)
}

// TestServer_UnknownEntryTypeStops: an entry of a type the server does
// not know, without the ignore flag, stops the running server at once,
// and stops it again at the same index when it restarts and replays it.
func TestServer_UnknownEntryTypeStops(t *testing.T) {
	dir := t.TempDir()
	s1 := testServer(t, onDiskConfig(dir))
	waitForLeader(t, s1)
	registerJob(t, s1, mockJob("before"))
	future := s1.raft.Apply([]byte{99, 0x80}, 5*time.Second)
	must.NoError(t, future.Error())
	idx := future.Index()
	resp, _ := future.Response().(error)
	must.ErrorIs(t, resp, fsm.ErrCorruptEntry)
	err := waitFatal(t, s1)
	must.StrContains(t, err.Error(), fmt.Sprintf("raft log entry at index %d (term ", idx))
	must.StrContains(t, err.Error(), "unknown message type 99")

	s2 := testServer(t, onDiskConfig(dir))
	err = waitFatal(t, s2)
	must.StrContains(t, err.Error(), fmt.Sprintf("raft log entry at index %d (term ", idx))
	must.StrContains(t, err.Error(), "unknown message type 99")
	job, _ := s2.State().JobByID(nil, structs.DefaultNamespace, "before")
	must.NotNil(t, job)
}

// snapshotDirs returns the server's Raft snapshot directories, oldest
// first.
func snapshotDirs(t *testing.T, dataDir string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(dataDir, "server", "raft", "snapshots", "*"))
	must.NoError(t, err)
	sort.Slice(dirs, func(i, j int) bool {
		fi, _ := os.Stat(dirs[i])
		fj, _ := os.Stat(dirs[j])
		return fi.ModTime().Before(fj.ModTime())
	})
	return dirs
}

// damage flips bytes in the middle of a file.
func damage(t *testing.T, path string) {
	t.Helper()
	buf, err := os.ReadFile(path)
	must.NoError(t, err)
	for i := len(buf) / 2; i < len(buf)/2+8 && i < len(buf); i++ {
		buf[i] ^= 0xff
	}
	must.NoError(t, os.WriteFile(path, buf, 0o600))
}

// TestServer_CorruptSnapshot: when the newest snapshot does not open,
// the server starts from the previous one if its log still reaches back
// to it, with the same state; when the log was compacted past it, the
// server refuses to start with a message naming the log and the
// snapshots' directory (Raft itself panicked at the first missing entry).
func TestServer_CorruptSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name     string
		trailing uint64
		want     []string
	}{
		{"log reaches the previous", 10240, nil},
		{"log compacted past the previous", 2,
			[]string{"server: start raft: no snapshot in ", "that the Raft log in ", "reaches opens", "miss the entries between"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := func(c *Config) {
				onDiskConfig(dir)(c)
				c.RaftTrailingLogs = tc.trailing
				c.RaftSnapshotThreshold = 1 << 30 // only the snapshots the test takes
			}
			s1 := testServer(t, cfg)
			waitForLeader(t, s1)
			for round := range 2 {
				for i := range 6 {
					registerJob(t, s1, mockJob(fmt.Sprintf("job-%d-%d", round, i)))
				}
				must.NoError(t, s1.raft.Snapshot().Error())
			}
			registerJob(t, s1, mockJob("tail"))
			before := dumpState(t, s1)
			must.NoError(t, s1.Shutdown())

			dirs := snapshotDirs(t, dir)
			must.Len(t, 2, dirs)
			damage(t, filepath.Join(dirs[1], "state.bin"))
			var logs syncBuffer
			s2, err := NewServer(func() *Config {
				c := DefaultConfig()
				c.NodeName = "restarted"
				c.RPCAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
				c.SerfBindAddr = "127.0.0.1"
				c.SerfPort = 0 // not Nomad's 4648, which another agent may hold
				c.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
				cfg(c)
				return c
			}())
			if s2 != nil {
				t.Cleanup(func() { s2.Shutdown() })
			}
			// The log says which snapshot failed and why.
			must.StrContains(t, logs.String(), "CRC checksum failed")
			must.StrContains(t, logs.String(), filepath.Base(dirs[1]))
			if tc.want != nil {
				must.Error(t, err)
				for _, w := range tc.want {
					must.StrContains(t, err.Error(), w)
				}
				return
			}
			must.NoError(t, err)
			waitForLeader(t, s2)
			waitForIndex(t, s2, before.index)
			must.Eq(t, before.jobs, dumpState(t, s2).jobs)
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestCluster_FollowerWithCorruptEntryStops: a follower whose own copy of
// a committed entry was damaged on disk stops at that entry when it
// replays its log, applying nothing after it; the two other servers keep
// the cluster writable.
func TestCluster_FollowerWithCorruptEntryStops(t *testing.T) {
	cfg1 := clusterConfig(t, 3, nil)
	s1 := testServer(t, cfg1)
	join := []string{s1.SerfAddr()}
	cfgs := []func(*Config){cfg1, clusterConfig(t, 3, join), clusterConfig(t, 3, join)}
	servers := []*Server{s1, testServer(t, cfgs[1]), testServer(t, cfgs[2])}
	leader := waitForLeader(t, servers...)
	var follower *Server
	var followerCfg func(*Config)
	for i, s := range servers[1:] {
		if s != leader {
			follower, followerCfg = s, cfgs[i+1]
			break
		}
	}
	registerJob(t, leader, mockJob("before"))
	const marker = "corrupt-on-one-disk-0123"
	idx := registerJob(t, leader, mockJob(marker)).Index
	last := idx
	for i := range 3 {
		last = registerJob(t, leader, mockJob(fmt.Sprintf("after-%d", i))).Index
	}
	waitForIndex(t, follower, last)
	rpcAddr := follower.RPCAddr().(*net.TCPAddr)
	dataDir := follower.config.DataDir
	must.NoError(t, follower.Shutdown())

	segs, err := filepath.Glob(filepath.Join(dataDir, "server", "raft", "wal", "*.wal"))
	must.NoError(t, err)
	damaged := false
	for _, name := range segs {
		buf, err := os.ReadFile(name)
		must.NoError(t, err)
		if at := bytes.Index(buf, []byte(marker)); at > 0 {
			copy(buf[at-1:], bytes.Repeat([]byte{0xc1}, 8))
			must.NoError(t, os.WriteFile(name, buf, 0o600))
			damaged = true
			break
		}
	}
	must.True(t, damaged)

	// The same Raft address, so the leader finds it again.
	restarted := testServer(t, func(c *Config) {
		followerCfg(c)
		c.RPCAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: rpcAddr.Port}
	})
	err = waitFatal(t, restarted)
	must.StrContains(t, err.Error(), fmt.Sprintf("raft log entry at index %d (term ", idx))
	for i := range 3 {
		job, err := restarted.State().JobByID(nil, "default", fmt.Sprintf("after-%d", i))
		must.NoError(t, err)
		must.Nil(t, job)
	}

	// Two of three servers still make a quorum.
	registerJob(t, leader, mockJob("still-writable"))
	for _, s := range servers {
		if s == follower {
			continue
		}
		job, err := s.State().JobByID(nil, "default", marker)
		must.NoError(t, err)
		must.NotNil(t, job)
	}
}
