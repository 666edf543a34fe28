package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// lonelyServer starts a one-server agent on a data dir of its own and
// waits for it to lead.
func lonelyServer(t *testing.T, name string) *agentProc {
	t.Helper()
	ports := freePorts(t, 3)
	a := startAgent(t, agentSpec{name: name, server: true, expect: 1, dataDir: t.TempDir(),
		http: ports[0], rpc: ports[1], serf: ports[2]})
	waitLeader(t, []*agentProc{a})
	return a
}

// registerJobs registers batch jobs with the ids and fails the test on
// an error.
func registerJobs(t *testing.T, a *agentProc, ids ...string) {
	t.Helper()
	c := a.api(t)
	for _, id := range ids {
		_, _, err := c.Jobs().Register(batchJob(id, "true"), nil)
		must.NoError(t, err)
	}
}

// requireJobs waits until the agent lists every job of ids.
func requireJobs(t *testing.T, a *agentProc, ids ...string) {
	t.Helper()
	c := a.api(t)
	waitFor(t, 30*time.Second, func() error {
		jobs, _, err := c.Jobs().List(nil)
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, j := range jobs {
			have[j.ID] = true
		}
		for _, id := range ids {
			if !have[id] {
				return fmt.Errorf("job %s is missing", id)
			}
		}
		return nil
	})
}

// lastSegment returns the path of the Raft log's last segment file.
func lastSegment(t *testing.T, dataDir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dataDir, "server", "raft", "wal", "*.wal"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, segs)
	sort.Strings(segs)
	return segs[len(segs)-1]
}

// runToExit runs the agent again and waits for it to exit on its own,
// returning its output and exit code.
func runToExit(t *testing.T, a *agentProc) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, nomadBin, "agent", "-config", a.config).CombinedOutput()
	must.NoError(t, ctx.Err(), must.Sprintf("the agent did not exit:\n%s", out))
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	must.NoError(t, err)
	return string(out), 0
}

// TestTornLogTail: a server killed in the middle of a log write (the
// last segment ends in an entry frame cut short, with no commit frame)
// starts, says at WARN what the WAL dropped, and has every acknowledged
// job.
func TestTornLogTail(t *testing.T) {
	a := lonelyServer(t, "torn")
	ids := []string{"one", "two", "three"}
	registerJobs(t, a, ids...)
	a.kill(syscall.SIGKILL)

	seg := lastSegment(t, a.dataDir)
	buf, err := os.ReadFile(seg)
	must.NoError(t, err)
	// Frames are 8-byte aligned and the rest of the preallocated file is
	// zeros: the data ends at the last commit frame.
	end := (len(bytes.TrimRight(buf, "\x00")) + 7) &^ 7
	frame := make([]byte, 8+64)
	frame[0] = 1 // an entry frame
	binary.LittleEndian.PutUint32(frame[4:], 4096)
	for i := 8; i < len(frame); i++ {
		frame[i] = 0xab
	}
	copy(buf[end:], frame)
	must.NoError(t, os.WriteFile(seg, buf, 0o600))

	a.start(t)
	waitLeader(t, []*agentProc{a})
	requireJobs(t, a, ids...)
	waitFor(t, 10*time.Second, func() error {
		for _, line := range strings.Split(a.output(), "\n") {
			if strings.Contains(line, "[WARN]") && strings.Contains(line, "torn or uncommitted write") &&
				strings.Contains(line, "segment="+seg) && strings.Contains(line, "dropped_entries=1") {
				return nil
			}
		}
		return errors.New("no WARN line about the dropped tail")
	})
}

// TestCorruptSnapshotFallsBack: the newest snapshot file damaged, the
// server starts from the previous snapshot and the log after it, with
// every job, and its log names the snapshot that failed.
func TestCorruptSnapshotFallsBack(t *testing.T) {
	a := lonelyServer(t, "snap")
	c := a.api(t)
	snapshot := func() {
		rc, err := c.Operator().Snapshot(nil)
		must.NoError(t, err)
		_, err = io.Copy(io.Discard, rc)
		must.NoError(t, err)
		must.NoError(t, rc.Close())
	}
	registerJobs(t, a, "a1", "a2")
	snapshot()
	registerJobs(t, a, "b1", "b2")
	snapshot()
	registerJobs(t, a, "c1")
	a.kill(syscall.SIGKILL)

	dirs, err := filepath.Glob(filepath.Join(a.dataDir, "server", "raft", "snapshots", "*"))
	must.NoError(t, err)
	must.Len(t, 2, dirs)
	sort.Slice(dirs, func(i, j int) bool {
		fi, _ := os.Stat(dirs[i])
		fj, _ := os.Stat(dirs[j])
		return fi.ModTime().Before(fj.ModTime())
	})
	state := filepath.Join(dirs[1], "state.bin")
	buf, err := os.ReadFile(state)
	must.NoError(t, err)
	for i := len(buf) / 2; i < len(buf)/2+8; i++ {
		buf[i] ^= 0xff
	}
	must.NoError(t, os.WriteFile(state, buf, 0o600))

	a.start(t)
	waitLeader(t, []*agentProc{a})
	requireJobs(t, a, "a1", "a2", "b1", "b2", "c1")
	out := a.output()
	must.StrContains(t, out, "CRC checksum failed")
	must.StrContains(t, out, filepath.Base(dirs[1]))
}

// TestCorruptEntryStopsAgent: a committed entry damaged on disk (not in
// the last batch, whose CRC raft-wal checks) stops `nomad agent` with exit
// code 1 and a message naming the entry's index and the segment file.
func TestCorruptEntryStopsAgent(t *testing.T) {
	a := lonelyServer(t, "corrupt")
	const marker = "damaged-job-0123456789"
	registerJobs(t, a, "before", marker, "after-1", "after-2", "after-3")
	a.kill(syscall.SIGTERM)

	seg := lastSegment(t, a.dataDir)
	buf, err := os.ReadFile(seg)
	must.NoError(t, err)
	at := bytes.Index(buf, []byte(marker))
	must.Positive(t, at)
	// The job ID's msgpack header and what follows: a byte msgpack never
	// uses.
	copy(buf[at-1:], bytes.Repeat([]byte{0xc1}, 8))
	must.NoError(t, os.WriteFile(seg, buf, 0o600))

	out, code := runToExit(t, a)
	must.Eq(t, 1, code, must.Sprintf("output:\n%s", out))
	must.StrContains(t, out, "==> Error: server stopped: raft log entry at index ")
	must.StrContains(t, out, "JobRegisterRequestType body")
	must.StrContains(t, out, "in the Raft log segment "+seg)
}
