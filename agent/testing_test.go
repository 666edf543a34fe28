package agent

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// NewTestAgent starts a local dev agent (StartLocal) for a test of this
// package, which cannot import agenttest, and shuts it down when the test
// ends. modify, when set, edits the config first.
func NewTestAgent(t testing.TB, modify func(*config.Config)) *Agent {
	t.Helper()
	a, err := StartLocal(modify, testLogOutput(), 60*time.Second)
	if err != nil {
		t.Fatalf("test agent: %v", err)
	}
	t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
	return a
}

// RegisterTestNode registers a ready node with raw_exec and mock_driver
// through the server RPC, for tests of an agent without a node client.
func RegisterTestNode(t testing.TB, a *Agent, name string) *structs.Node {
	t.Helper()
	node := &structs.Node{
		ID:         structs.GenerateUUID(),
		SecretID:   structs.GenerateUUID(),
		Datacenter: a.config.Datacenter,
		Name:       name,
		HTTPAddr:   "127.0.0.1:4646",
		NodePool:   structs.DefaultNodePool,
		Attributes: map[string]string{
			"kernel.name": "linux", "os.name": "ubuntu", "cpu.arch": "amd64", "nomad.version": "0.1.0",
			"unique.hostname": name, "driver.raw_exec": "1", "driver.mock_driver": "1",
		},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
		},
		ReservedResources: &structs.NodeReservedResources{},
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec":    {Detected: true, Healthy: true, HealthDescription: "Healthy"},
			"mock_driver": {Detected: true, Healthy: true, HealthDescription: "Healthy"},
		},
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	var reply structs.NodeUpdateResponse
	if err := a.rpc("Node.Register", &structs.NodeRegisterRequest{Node: node}, &reply); err != nil {
		t.Fatalf("register test node: %v", err)
	}
	return node
}

// testLogOutput is where test agents log: stderr when NOMADQ_TEST_LOG is
// set, nowhere otherwise.
func testLogOutput() io.Writer {
	if os.Getenv("NOMADQ_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// logBuffer is an agent's log output that a test reads while it grows.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitLogLine waits until the log holds every one of parts on one line.
func waitLogLine(t *testing.T, l *logBuffer, parts ...string) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		for _, line := range strings.Split(l.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return true
			}
		}
		return false
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)), must.Sprint(parts, "\n", l.String()))
}
