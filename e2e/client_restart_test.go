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

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// serverAndClient starts a one-server cluster and a client agent (its
// spec changed by with, when given), waits until the client's node is
// ready, and returns the server, the client and an API client of the
// server.
func serverAndClient(t *testing.T, with func(*agentSpec)) (*agentProc, *agentProc, *api.Client) {
	t.Helper()
	ports := freePorts(t, 6)
	server := startAgent(t, agentSpec{
		name: "server", server: true, expect: 1, dataDir: t.TempDir(),
		http: ports[0], rpc: ports[1], serf: ports[2],
	})
	spec := agentSpec{
		name: "client", client: true, servers: []string{server.rpc}, dataDir: t.TempDir(),
		http: ports[3], rpc: ports[4], serf: ports[5],
	}
	if with != nil {
		with(&spec)
	}
	client := startAgent(t, spec)
	nomad := server.api(t)
	waitFor(t, 30*time.Second, func() error {
		nodes, _, err := nomad.Nodes().List(nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != "ready" {
			return fmt.Errorf("want one ready node, have %d", len(nodes))
		}
		return nil
	})
	return server, client, nomad
}

// A raw_exec task survives its client agent being killed with SIGKILL: the
// restarted client (same data_dir) re-attaches to the same process, does
// not start it again, and reports its normal completion.
func TestClientSIGKILLKeepsTaskRunning(t *testing.T) {
	_, client, nomad := serverAndClient(t, nil)

	// The task records its PID, then runs until a file appears, so the
	// test decides when it ends.
	release := filepath.Join(t.TempDir(), "release")
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := fmt.Sprintf(`echo $$ > %s; while [ ! -e %s ]; do sleep 0.1; done; echo done`, pidFile, release)
	t.Cleanup(func() {
		// Whatever happens, the task must not outlive the test.
		if buf, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(buf))); err == nil {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	_, _, err := nomad.Jobs().Register(batchJob("survivor", script), nil)
	must.NoError(t, err)

	var allocID string
	waitFor(t, 30*time.Second, func() error {
		allocs, _, err := nomad.Jobs().Allocations("survivor", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return fmt.Errorf("alloc not running yet")
		}
		allocID = allocs[0].ID
		return nil
	})
	var pid int
	waitFor(t, 10*time.Second, func() error {
		buf, err := os.ReadFile(pidFile)
		if err != nil {
			return err
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(buf)))
		return err
	})

	client.kill(syscall.SIGKILL)
	must.NoError(t, syscall.Kill(pid, 0), must.Sprint("the task died with its client"))

	client.start(t)
	must.NoError(t, os.WriteFile(release, nil, 0o600))

	waitFor(t, 30*time.Second, func() error {
		alloc, _, err := nomad.Allocations().Info(allocID, nil)
		if err != nil {
			return err
		}
		if alloc.ClientStatus != "complete" {
			return fmt.Errorf("alloc is %s", alloc.ClientStatus)
		}
		return nil
	})
	alloc, _, err := nomad.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	ts := alloc.TaskStates["main"]
	must.NotNil(t, ts)
	must.Eq(t, uint64(0), ts.Restarts)
	started := 0
	for _, e := range ts.Events {
		if e.Type == api.TaskStarted {
			started++
		}
	}
	must.Eq(t, 1, started, must.Sprint("the task was started again after the client restart"))
	buf, err := os.ReadFile(pidFile)
	must.NoError(t, err)
	must.Eq(t, strconv.Itoa(pid), strings.TrimSpace(string(buf)), must.Sprint("a second process wrote its PID"))

	allocs, _, err := nomad.Jobs().Allocations("survivor", true, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
}
