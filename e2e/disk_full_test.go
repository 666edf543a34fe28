package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// mountTmpfs mounts a tmpfs of size MiB on a new directory and unmounts
// it when the test ends (after the agents on it are stopped: cleanups run
// last first). It skips the test where mounting is not allowed.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "tmpfs")
	must.NoError(t, os.Mkdir(dir, 0o700))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// freeBytes is the space left on the file system of dir.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	must.NoError(t, syscall.Statfs(dir, &st))
	return int64(st.Bavail) * int64(st.Bsize)
}

// bulkyJob is a batch job of about 500 KB (its meta), so that a few
// hundred fill a Raft log segment (64 MiB).
func bulkyJob(id string) *api.Job {
	job := batchJob(id, "true")
	job.Meta = map[string]string{}
	for i := range 100 {
		buf := make([]byte, 2500)
		_, _ = rand.Read(buf)
		job.Meta[fmt.Sprintf("k%03d", i)] = hex.EncodeToString(buf)
	}
	return job
}

// TestDiskFull: a server whose data dir fills up answers writes with an
// error that names the Raft log's directory and the cause, recovers by
// itself once space is freed (no restart), and after a restart holds
// every job whose registration was acknowledged, before, during and after
// the fault.
func TestDiskFull(t *testing.T) {
	longTests(t)
	dataDir := mountTmpfs(t, 200)
	ports := freePorts(t, 3)
	srv := startAgent(t, agentSpec{name: "full", server: true, expect: 1, dataDir: dataDir,
		http: ports[0], rpc: ports[1], serf: ports[2]})
	c := srv.api(t)
	waitFor(t, 30*time.Second, func() error {
		if l, err := c.Status().Leader(); err != nil || l == "" {
			return fmt.Errorf("no leader yet: %q %v", l, err)
		}
		return nil
	})
	var acked []string
	register := func(id string) error {
		_, _, err := c.Jobs().Register(bulkyJob(id), nil)
		if err == nil {
			acked = append(acked, id)
		}
		return err
	}
	for i := range 3 {
		must.NoError(t, register(fmt.Sprintf("before-%d", i)))
	}

	// Leave 3 MiB: the Raft log's preallocated segment (64 MiB) takes
	// writes until it is full; the next segment does not fit, nor do the
	// writes past the slack.
	filler := filepath.Join(dataDir, "filler")
	f, err := os.Create(filler)
	must.NoError(t, err)
	chunk := make([]byte, 1<<20)
	for left := freeBytes(t, dataDir) - 3<<20; left > 0; left -= int64(len(chunk)) {
		_, err := f.Write(chunk[:min(int64(len(chunk)), left)])
		must.NoError(t, err)
	}
	must.NoError(t, f.Close())

	// Write until the writes fail, several in a row over a few seconds.
	var failures []string
	inRow := 0
	for i := 0; inRow < 5; i++ {
		must.Less(t, 400, i, must.Sprint("the writes never failed on a full disk"))
		if err := register(fmt.Sprintf("during-%d", i)); err != nil {
			failures = append(failures, err.Error())
			inRow++
			time.Sleep(500 * time.Millisecond)
			continue
		}
		inRow = 0
	}
	t.Logf("%d jobs acknowledged; the failed writes answered:\n%s", len(acked), strings.Join(failures, "\n"))
	walDir := filepath.Join(dataDir, "server", "raft", "wal")
	named := false
	for _, msg := range failures {
		if strings.Contains(msg, "write raft log in "+walDir) &&
			(strings.Contains(msg, "no space left on device") || strings.Contains(msg, "segment is sealed")) {
			named = true
		}
	}
	must.True(t, named, must.Sprint("no failed write names the raft log directory and the cause"))

	// Space returns: writes succeed again without a restart.
	must.NoError(t, os.Remove(filler))
	start := time.Now()
	waitFor(t, 60*time.Second, func() error { return register(fmt.Sprintf("recovered-%d", len(acked))) })
	t.Logf("writes succeeded again %s after space was freed", time.Since(start).Round(time.Millisecond))
	for i := range 3 {
		must.NoError(t, register(fmt.Sprintf("after-%d", i)))
	}

	// Every acknowledged job is there, and still there after a restart.
	check := func() {
		jobs, _, err := c.Jobs().List(nil)
		must.NoError(t, err)
		have := map[string]bool{}
		for _, j := range jobs {
			have[j.ID] = true
		}
		for _, id := range acked {
			must.True(t, have[id], must.Sprintf("acknowledged job %s is missing", id))
		}
	}
	check()
	srv.kill(syscall.SIGTERM)
	srv.start(t)
	waitFor(t, 30*time.Second, func() error {
		l, err := c.Status().Leader()
		if err == nil && l == "" {
			err = errors.New("no leader yet")
		}
		return err
	})
	waitFor(t, 30*time.Second, func() error {
		jobs, _, err := c.Jobs().List(nil)
		if err == nil && len(jobs) < len(acked) {
			err = fmt.Errorf("%d jobs, want %d", len(jobs), len(acked))
		}
		return err
	})
	check()
}
