package agent

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nomadq/nomadq/structs"
)

var testAgentSeq atomic.Int64

// NewTestAgent starts a dev agent for a test on 127.0.0.1 with every port
// picked by the kernel, waits for its server to lead, and shuts it down
// when the test ends. modify, when set, edits the config first.
func NewTestAgent(t testing.TB, modify func(*Config)) *Agent {
	t.Helper()
	cfg := DevConfig()
	cfg.Name = fmt.Sprintf("test-agent-%d", testAgentSeq.Add(1))
	cfg.Ports = &Ports{}
	cfg.LogLevel = "WARN"
	cfg.Server.NumSchedulers = 2
	if modify != nil {
		modify(cfg)
	}
	var out io.Writer = io.Discard
	if os.Getenv("NOMADQ_TEST_LOG") != "" {
		out = os.Stderr
	}
	a, err := New(cfg, out)
	if err != nil {
		t.Fatalf("start test agent: %v", err)
	}
	t.Cleanup(func() { a.Shutdown() })
	if a.server != nil {
		deadline := time.Now().Add(10 * time.Second)
		for a.server.Leader() == "" {
			if time.Now().After(deadline) {
				t.Fatalf("test agent: no leader after 10s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// Leadership is established once the scheduler config is readable.
		for {
			var reply structs.SchedulerConfigurationResponse
			if err := a.rpc("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &reply); err == nil && reply.SchedulerConfig != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("test agent: scheduler configuration not ready after 10s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if a.client != nil {
		deadline := time.Now().Add(10 * time.Second)
		for {
			var reply structs.SingleNodeResponse
			args := &structs.NodeSpecificRequest{NodeID: a.client.NodeID()}
			if err := a.rpc("Node.Get", args, &reply); err == nil && reply.Node != nil && reply.Node.Status == structs.NodeStatusReady {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("test agent: client node not ready after 10s")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
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
