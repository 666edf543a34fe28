package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/client/network"
)

// client.bridge_network_subnet_ipv6: a bridge alloc's task sees an
// address from the IPv6 subnet and a default IPv6 route through the
// bridge besides its IPv4 address; a value that is not an IPv6 CIDR
// stops the agent naming the key.
func TestBridgeNetwork_IPv6(t *testing.T) {
	file := "client {\n bridge_network_subnet_ipv6 = \"fd00:a110:c8::/120\"\n}\n"
	cfg := config.Default()
	must.NoError(t, config.Parse(cfg, "client.hcl", []byte(file), func(w string) { t.Errorf("warning: %s", w) }))
	must.Eq(t, "fd00:a110:c8::/120", cfg.Client.BridgeNetworkSubnetIPv6)
	for _, bad := range []string{"10.88.0.0/16", "fd00:a110:c8::"} {
		_, err := StartLocal(func(c *config.Config) { c.Client.BridgeNetworkSubnetIPv6 = bad }, testLogOutput(), 60*time.Second)
		must.ErrorContains(t, err, `bridge_network_subnet_ipv6 "`+bad+`" is not allowed: must be an IPv6 CIDR`)
	}

	skipWithoutBridge(t)
	if v, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6"); err != nil || strings.TrimSpace(string(v)) != "0" {
		t.Skip("IPv6 is disabled on this machine (net.ipv6.conf.all.disable_ipv6)")
	}
	if _, err := exec.LookPath("ip6tables"); err != nil {
		t.Skip("bridge networking with IPv6 needs ip6tables")
	}
	// A bridge of its own, so the shared "nomad" bridge of the other
	// tests gets no IPv6 address.
	const bridge = "nqv6"
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.Server.Enabled = false
		c.DataDir = dataDir
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
		c.Client.CNIPath = strings.Join(client.DefaultCNIPath, ":")
		c.Client.BridgeNetworkName = bridge
		c.Client.BridgeNetworkSubnet = "172.26.96.0/24"
		c.Client.BridgeNetworkSubnetIPv6 = "fd00:a110:c8::/120"
	})
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
		_ = exec.Command("ip", "link", "del", bridge).Run()
	})

	task := api.NewTask("main", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", "ip -o addr show dev eth0 scope global; ip -6 route show default"}}
	task.Require(&api.Resources{CPU: new(50), MemoryMB: new(64)})
	job := api.NewBatchJob("v6", "v6", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.Networks = []*api.NetworkResource{{Mode: "bridge"}}
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	a := onlyAlloc(t, c, "v6", func(s *api.AllocationListStub) bool {
		return s.ClientStatus == api.AllocClientStatusComplete || s.ClientStatus == api.AllocClientStatusFailed
	})
	must.Eq(t, api.AllocClientStatusComplete, a.ClientStatus, must.Sprintf("%+v", a.TaskStates["main"]))
	b, err := os.ReadFile(filepath.Join(dataDir, "alloc", a.ID, "alloc", "logs", "main.stdout.0"))
	must.NoError(t, err)
	out := string(b)
	must.StrContains(t, out, "inet 172.26.96.")
	must.StrContains(t, out, "inet6 fd00:a110:c8::")
	must.StrContains(t, out, "default via fd00:a110:c8::1 dev eth0")
}
