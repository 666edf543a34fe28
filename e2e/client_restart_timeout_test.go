package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// maxRunReason is the ClientDescription of an alloc max_run_duration
// ended.
const maxRunReason = "allocation exceeded max_run_duration"

// A client is killed with SIGKILL while it is killing an alloc at its
// max_run_duration (the task traps SIGTERM and takes seconds to exit)
// and is started again on its data dir. The alloc ends once: complete,
// with the timeout description, one timed-out alloc in the summary, its
// task dead and started once, and no process of the task left.
func TestClientSIGKILLDuringMaxRunDurationKill(t *testing.T) {
	server, client, nomad := serverAndClient(t, nil)

	dir := t.TempDir()
	pidFile, termFile := filepath.Join(dir, "pid"), filepath.Join(dir, "term")
	// On its kill signal the task notes it and takes three seconds to exit:
	// the client is killed in that window.
	script := fmt.Sprintf(`trap 'echo term >> %s; sleep 3; exit 0' INT TERM; echo $$ > %s; while true; do sleep 0.1; done`,
		termFile, pidFile)
	job := batchJob("timeout-restart", script)
	limit, killTimeout := 3*time.Second, 30*time.Second
	job.TaskGroups[0].MaxRunDuration = &limit
	job.TaskGroups[0].Tasks[0].KillTimeout = &killTimeout
	var pid int
	t.Cleanup(func() {
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
	_, _, err := nomad.Jobs().Register(job, nil)
	must.NoError(t, err)
	waitFor(t, 30*time.Second, func() error {
		buf, err := os.ReadFile(pidFile)
		if err != nil {
			return err
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(buf)))
		return err
	})
	waitFor(t, 30*time.Second, func() error {
		_, err := os.Stat(termFile)
		return err
	})
	client.kill(syscall.SIGKILL)
	client.start(t)

	var allocID string
	waitFor(t, 60*time.Second, func() error {
		allocs, _, err := nomad.Jobs().Allocations("timeout-restart", true, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
			return fmt.Errorf("want one complete alloc, have %d (%v)", len(allocs), allocs)
		}
		allocID = allocs[0].ID
		return nil
	})
	alloc, _, err := nomad.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	must.Eq(t, maxRunReason, alloc.ClientDescription)
	ts := alloc.TaskStates["main"]
	must.NotNil(t, ts)
	must.Eq(t, "dead", ts.State)
	started := 0
	for _, e := range ts.Events {
		if e.Type == "Started" {
			started++
		}
	}
	must.Eq(t, 1, started, must.Sprint("the task was started again after the client restart"))
	summary, _, err := nomad.Jobs().Summary("timeout-restart", nil)
	must.NoError(t, err)
	s := summary.Summary["work"]
	must.Eq(t, 1, s.Complete)
	must.Eq(t, 0, s.Failed+s.Lost+s.Running)
	must.Eq(t, 1, timedOut(t, server, "timeout-restart"), must.Sprint("the timeout counted once"))

	waitFor(t, 10*time.Second, func() error {
		if left := processGroup(pid); len(left) > 0 {
			return fmt.Errorf("processes of the task left: %v", left)
		}
		return nil
	})
}

// timedOut reads the job summary's TimedOut count of group "work" (a
// nomadq field the api module does not know).
func timedOut(t *testing.T, a *agentProc, job string) int {
	t.Helper()
	var out struct {
		Summary map[string]struct{ TimedOut int }
	}
	_, err := a.api(t).Raw().Query("/v1/job/"+job+"/summary", &out, nil)
	must.NoError(t, err)
	return out.Summary["work"].TimedOut
}

// processGroup lists the live (not zombie) processes in process group
// pgid, from /proc.
func processGroup(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		buf, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing paren: state ppid pgrp.
		s := string(buf)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}
