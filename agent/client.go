package agent

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers"
)

// NodeClient is the node agent (client/) as the agent runs it.
type NodeClient interface {
	NodeID() string
	NodeSecret() string
	Shutdown() error
}

// clientEndpoints is what the /v1/client endpoints read from the node
// agent. Values are encoded as JSON as they are.
type clientEndpoints interface {
	AllocStats(allocID string) (any, error)
	AllocChecks(allocID string) (any, error)
	HostStats() (any, error)
	// Logs opens a task's stdout or stderr log, starting at offset bytes
	// from the start ("start") or the end ("end"); with follow the reader
	// waits for more until ctx-like closing.
	Logs(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error)
	// Stats is the "client" section of /v1/agent/self.
	Stats() map[string]string
	// RestartAlloc, SignalAlloc and ExecAlloc act on the tasks of an
	// alloc this node runs.
	RestartAlloc(allocID, task string, allTasks bool) error
	SignalAlloc(allocID, task, signal string) error
	ExecAlloc(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (int, error)
	// AllocDir is the directory of an alloc this node runs.
	AllocDir(allocID string) (*allocdir.AllocDir, error)
}

// newNodeClient starts the node agent (client/) for the agent: in
// process with the agent's server when there is one, otherwise over RPC
// to the configured servers.
func newNodeClient(a *Agent, rpc RPCer, servers []string, dataDir string) (NodeClient, error) {
	cfg := a.config
	if cfg.Client.SimNodes > 0 {
		return newSimClient(a, rpc, servers)
	}
	adapter := &nodeClient{}
	if dataDir == "" {
		// A dev agent keeps alloc dirs and client state in a temp dir
		// that goes away with it.
		dir, err := os.MkdirTemp("", "NomadClient")
		if err != nil {
			return nil, fmt.Errorf("create client temp dir: %w", err)
		}
		adapter.tempDir = dir
		dataDir = dir
	} else {
		// The client keeps state in <dir>/client and allocs in <dir>/alloc.
		dataDir = strings.TrimSuffix(dataDir, string(os.PathSeparator)+"client")
	}
	options := make(map[string]string, len(cfg.Client.Options)+2)
	for k, v := range cfg.Client.Options {
		options[k] = v
	}
	options["driver.raw_exec.enable"] = strconv.FormatBool(cfg.RawExecEnabled())
	for _, p := range cfg.Plugins {
		if p.Name == "mock_driver" {
			enabled := true
			if b, ok := p.Config["enabled"].(bool); ok {
				enabled = b
			}
			options["driver.mock_driver.enable"] = strconv.FormatBool(enabled)
		}
	}
	if cfg.DevMode {
		options["driver.mock_driver.enable"] = "true"
	}
	httpAddr := strings.TrimPrefix(a.httpAddr, a.httpScheme()+"://")
	if strings.HasPrefix(httpAddr, "0.0.0.0:") {
		httpAddr = "127.0.0.1:" + strings.TrimPrefix(httpAddr, "0.0.0.0:")
	}
	var dockerConfig map[string]any
	for _, p := range cfg.Plugins {
		if p.Name == "docker" {
			dockerConfig = p.Config
		}
	}
	cc := client.Config{
		DockerPluginConfig: dockerConfig,
		DataDir:            dataDir,
		NodeName:           cfg.Name,
		Datacenter:         cfg.Datacenter,
		NodePool:           cfg.Client.NodePool,
		NodeClass:          cfg.Client.NodeClass,
		IntroToken:         cfg.Client.IntroToken,
		Meta:               cfg.Client.Meta,
		Region:             cfg.Region,
		HTTPAddr:           httpAddr,
		HTTPTLS:            cfg.TLS.EnableHTTP,
		Options:            options,
		ChrootEnv:          cfg.Client.ChrootEnv,
		// Tasks are reached where the agent is: the advertised RPC
		// address, unless network_interface names an interface.
		NetworkInterface: cfg.Client.NetworkInterface,
		AdvertiseIP:      advertisedHost(cfg.AdvertiseAddrs.HTTP, httpAddr),
		MinDynamicPort:   cfg.Client.MinDynamicPort,
		MaxDynamicPort:   cfg.Client.MaxDynamicPort,
		HostVolumes:      cfg.Client.HostVolumes,
		CNIPath:          splitCNIPath(cfg.Client.CNIPath),
		CNIConfigDir:     cfg.Client.CNIConfigDir,
		DevMode:          cfg.DevMode,
		EphemeralState:   adapter.tempDir != "",
		Servers:          servers,
		Logger:           a.logger,
		// The client's gauges (max_run_duration) go to this agent's sinks.
		Metrics:         a.telemetry.metrics,
		MetricsInterval: cfg.Telemetry.CollectionIntervalDur,
		// Bridge network mode: "" takes the client's defaults.
		BridgeNetworkName:        cfg.Client.BridgeNetworkName,
		BridgeNetworkSubnet:      cfg.Client.BridgeNetworkSubnet,
		BridgeNetworkHairpinMode: cfg.Client.BridgeNetworkHairpinMode,
		BridgeNetworkSubnetIPv6:  cfg.Client.BridgeNetworkSubnetIPv6,
	}
	if rpc != nil {
		cc.RPC = client.InProcessRPC(rpc)
	}
	if cfg.TLS.EnableRPC {
		cc.RPCTLS = a.tls.OutgoingRPC()
	}
	c, err := client.NewClient(cc)
	if err != nil {
		if adapter.tempDir != "" {
			os.RemoveAll(adapter.tempDir)
		}
		return nil, err
	}
	adapter.c = c
	return adapter, nil
}

// nodeClient adapts client.Client to what the agent and its HTTP API use.
type nodeClient struct {
	c       *client.Client
	tempDir string
}

func (n *nodeClient) NodeID() string { return n.c.NodeID() }

// NodeSecret is the node's secret, which authenticates its calls when
// ACLs are on.
func (n *nodeClient) NodeSecret() string { return n.c.Node().SecretID }

func (n *nodeClient) Shutdown() error {
	if n.tempDir == "" {
		n.c.Shutdown()
		return nil
	}
	// A dev agent's tasks die with it, as Nomad's do.
	n.c.Destroy()
	return os.RemoveAll(n.tempDir)
}

// Destroy kills every task of the client and stops it.
func (n *nodeClient) Destroy() { n.c.Destroy() }

func (n *nodeClient) AllocStats(allocID string) (any, error) { return n.c.AllocStats(allocID) }

func (n *nodeClient) AllocChecks(allocID string) (any, error) { return n.c.AllocChecks(allocID) }

func (n *nodeClient) HostStats() (any, error) { return n.c.HostStats() }

func (n *nodeClient) Logs(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error) {
	return n.c.LogReader(allocID, task, logType, origin, offset, follow)
}

func (n *nodeClient) RestartAlloc(allocID, task string, allTasks bool) error {
	return n.c.RestartAlloc(allocID, task, allTasks)
}

func (n *nodeClient) SignalAlloc(allocID, task, signal string) error {
	return n.c.SignalAlloc(allocID, task, signal)
}

func (n *nodeClient) ExecAlloc(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (int, error) {
	return n.c.ExecAlloc(ctx, allocID, task, opts)
}

func (n *nodeClient) AllocDir(allocID string) (*allocdir.AllocDir, error) {
	ar, err := n.c.AllocRunner(allocID)
	if err != nil {
		return nil, err
	}
	return ar.AllocDir(), nil
}

func (n *nodeClient) Stats() map[string]string {
	node := n.c.Node()
	return map[string]string{
		"node_id":       node.ID,
		"known_servers": "1",
	}
}

// RPC makes a client-only agent's HTTP API reach the servers (Agent.rpc).
func (n *nodeClient) RPC(method string, args, reply any) error { return n.c.RPC(method, args, reply) }

// advertisedHost is the host part of the advertised HTTP address, or of
// the address the HTTP listener is reached at when none is advertised.
func advertisedHost(advertised, listener string) string {
	for _, a := range []string{advertised, listener} {
		if a == "" {
			continue
		}
		if h, _, err := net.SplitHostPort(a); err == nil {
			return h
		}
		return a
	}
	return ""
}

// splitCNIPath reads cni_path as Nomad does: directories separated by
// colons; "" means the client's default.
func splitCNIPath(p string) []string {
	var out []string
	for _, d := range strings.Split(p, ":") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}
