package agent

import (
	"time"

	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/client/sim"
)

// simClient is the node simulator (client/sim) standing in for the
// agent's client when client.sim_nodes (-sim-nodes) is set. It serves no
// /v1/client endpoints: simulated tasks have no logs, files or stats.
type simClient struct {
	s       *sim.Sim
	servers *client.ServerRPC // nil in process with a server
}

// newSimClient starts cfg.Client.SimNodes simulated nodes: in process
// with the agent's server when there is one, otherwise over RPC to the
// configured servers, through one shared connection pool.
func newSimClient(a *Agent, rpc RPCer, servers []string) (NodeClient, error) {
	cfg := a.config
	sc := sim.Config{
		Count:      cfg.Client.SimNodes,
		NamePrefix: "sim",
		Region:     cfg.Region,
		Datacenter: cfg.Datacenter,
		NodePool:   cfg.Client.NodePool,
		NodeClass:  cfg.Client.NodeClass,
		IntroToken: cfg.Client.IntroToken,
		Meta:       cfg.Client.Meta,
		Version:    client.Version,
		CPU:        int64(cfg.Client.SimNodeCPU),
		MemoryMB:   int64(cfg.Client.SimNodeMemoryMB),
		Logger:     a.logger,
	}
	out := &simClient{}
	if rpc != nil {
		sc.RPC = client.InProcessRPC(rpc)
	} else {
		out.servers = client.NewServerRPC(servers, 5*time.Second)
		sc.RPC = out.servers
		sc.Learn = out.servers.Learn
	}
	s, err := sim.New(sc)
	if err != nil {
		if out.servers != nil {
			out.servers.Close()
		}
		return nil, err
	}
	out.s = s
	return out, nil
}

// NodeID is the first simulated node's (sim-0001): the agent waits for
// it to be ready, and answers /v1/agent/self with it.
func (c *simClient) NodeID() string { id, _ := c.s.FirstNode(); return id }

// NodeSecret is the first simulated node's secret.
func (c *simClient) NodeSecret() string { _, secret := c.s.FirstNode(); return secret }

// Shutdown stops the simulated nodes (see sim.Sim.Shutdown).
func (c *simClient) Shutdown() error {
	c.s.Shutdown()
	if c.servers != nil {
		c.servers.Close()
	}
	return nil
}

// RPC makes a client-only agent's HTTP API reach the servers.
func (c *simClient) RPC(method string, args, reply any) error { return c.s.RPC(method, args, reply) }

// Sim is the simulator itself, for tests and benchmarks.
func (c *simClient) Sim() *sim.Sim { return c.s }
