package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/network"
	"github.com/nomadq/nomadq/structs"
)

// httpAnswers reports whether the host port serves HTTP.
func httpAnswers(port int) error {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// A client killed while a bridge alloc runs leaves its namespace in
// place; the next client keeps it (same address, the task answering
// throughout), and the one after a stop that happened while no client
// ran tears it down.
func TestClient_BridgeNetworkAcrossCrashes(t *testing.T) {
	probe := network.New(network.Config{CNIPath: DefaultCNIPath, Bridge: network.BridgeConfig{Name: network.DefaultBridgeName, Subnet: network.DefaultBridgeSubnet}})
	if c := probe.Fingerprint(); !c.Bridge {
		t.Skipf("bridge networking unavailable: %s", c.BridgeReason)
	}
	srv := testServer(t)
	dataDir := t.TempDir()
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})
	pids := reaper(t)
	c1 := testClient(t, srv, dataDir, nil)
	task := shTask("main", `echo $$ > local/pid; cd local && exec python3 -m http.server "$NOMAD_PORT_http"`)
	job := batchJob("bridge", task)
	job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: "bridge", DynamicPorts: []structs.Port{{Label: "http", To: 8080}}}}
	register(t, srv, job)
	a := serverAlloc(t, srv, "bridge", 30*time.Second, status(structs.AllocClientStatusRunning))
	local := allocdir.New(c1.cfg.AllocDir, a.ID).LocalDir("main")
	waitFile(t, filepath.Join(local, "pid"), func(s string) bool {
		pid, err := strconv.Atoi(strings.TrimSpace(s))
		if err == nil {
			pids.add(pid)
		}
		return err == nil
	})
	port := a.AllocatedResources.Shared.Ports[0].Value
	answer := func() {
		t.Helper()
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error { return httpAnswers(port) }),
			wait.Timeout(20*time.Second), wait.Gap(50*time.Millisecond)))
	}
	answer()
	ar1, err := c1.AllocRunner(a.ID)
	must.NoError(t, err)
	addr := ar1.ClientAlloc().NetworkStatus.Address
	must.NotEq(t, "", addr)
	netns := filepath.Join(network.DefaultNetnsDir, a.ID)

	c1.crash()
	answer()
	c2 := testClient(t, srv, dataDir, nil)
	ar2, err := c2.AllocRunner(a.ID)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return ar2.ClientAlloc().NetworkStatus.Address == addr }),
		wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
	answer()
	_, err = os.Stat(netns)
	must.NoError(t, err)

	c2.crash()
	deregister(t, srv, "bridge")
	testClient(t, srv, dataDir, nil)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		_, err := os.Stat(netns)
		return os.IsNotExist(err)
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	must.Error(t, httpAnswers(port))
}
