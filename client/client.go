// Package client is the node agent: it fingerprints the machine,
// registers and heartbeats with the servers, watches for the allocations
// placed on it, runs them through alloc runners, and reports their status
// back.
package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/allocrunner"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/drivers/docker"
	execdriver "github.com/nomadq/nomadq/client/drivers/exec"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/client/drivers/rawexec"
	"github.com/nomadq/nomadq/client/network"
	"github.com/nomadq/nomadq/client/state"
	"github.com/nomadq/nomadq/structs"
)

// Client is a running node agent.
type Client struct {
	cfg     Config
	logger  hclog.Logger
	rpc     RPC
	servers *serverList // nil when cfg.RPC is used
	db      *state.DB
	drivers map[string]drivers.Driver
	node    *structs.Node
	sync    *allocSync
	host    *hostStats

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	registered     chan struct{}
	registeredOnce sync.Once
	// heartbeatTTL is only touched by the heartbeat goroutine.
	heartbeatTTL time.Duration

	// health is the drivers' latest fingerprint; nodeChanged tells the
	// heartbeat loop to register the node again with it.
	healthMu    sync.Mutex
	health      driverHealth
	nodeChanged chan struct{}

	// oomKills counts tasks the kernel killed for their memory limit
	// since the client started.
	oomKills atomic.Uint64

	// netMgr sets up the namespaces of bridge and cni network modes.
	netMgr *network.Manager

	// dynMeta is the node metadata set through the API (node_meta.go).
	metaMu  sync.Mutex
	dynMeta map[string]*string

	mu      sync.Mutex
	runners map[string]*allocrunner.AllocRunner
	closed  bool
}

// NewClient starts a client: it restores the allocs of an earlier client
// on the same data dir (re-attaching to their running tasks), then
// registers with the servers and starts watching for allocs.
func NewClient(cfg Config) (*Client, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	for _, d := range []string{cfg.AllocDir, cfg.StateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	if cfg.IntroToken == "" {
		tok, err := readIntroToken(cfg.StateDir)
		if err != nil {
			return nil, err
		}
		cfg.IntroToken = tok
	}
	db, err := state.Open(filepath.Join(cfg.StateDir, "state.db"), cfg.EphemeralState)
	if err != nil {
		return nil, err
	}
	id, secret, err := db.NodeIdentity()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("client: read node identity: %w", err)
	}
	if id == "" {
		id, secret = structs.GenerateUUID(), structs.GenerateUUID()
		if err := db.PutNodeIdentity(id, secret); err != nil {
			db.Close()
			return nil, fmt.Errorf("client: store node identity: %w", err)
		}
	}
	c := &Client{
		cfg:         cfg,
		logger:      cfg.Logger.Named("client"),
		db:          db,
		runners:     make(map[string]*allocrunner.AllocRunner),
		registered:  make(chan struct{}),
		nodeChanged: make(chan struct{}, 1),
		host:        newHostStats(),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if cfg.RPC != nil {
		c.rpc = cfg.RPC
	} else {
		c.servers = newServerList(cfg.Servers, cfg.RPCTimeout)
		if cfg.RPCTLS != nil {
			c.servers.pool.UseTLS(cfg.RPCTLS)
		}
		c.rpc = c.servers
	}
	c.drivers = cfg.Drivers
	if c.drivers == nil {
		dockerCfg, err := docker.ParsePluginConfig(cfg.DockerPluginConfig)
		if err != nil {
			c.cancel()
			db.Close()
			return nil, fmt.Errorf("client: %w", err)
		}
		c.drivers = map[string]drivers.Driver{
			rawexec.Name: rawexec.New(rawexec.Options{Enabled: cfg.rawExecEnabled()}),
			// exec needs no enabling, as in Nomad: it fingerprints itself
			// undetected where it cannot isolate tasks.
			execdriver.Name: execdriver.New(execdriver.Options{ChrootEnv: cfg.ChrootEnv}),
			// docker too: detected where its engine answers.
			docker.Name: docker.New(docker.Options{
				Config: dockerCfg, NodeID: id, NodeName: cfg.NodeName, Logger: cfg.Logger,
				// Read when a task starts, after the node is built below.
				TotalCompute: func() int64 { return c.node.NodeResources.Cpu.CpuShares },
			}),
		}
		if cfg.DevMode || cfg.optionBool("driver.mock_driver.enable") {
			c.drivers[mock.Name] = mock.New()
		}
	}
	c.node = buildNode(&c.cfg, id, secret, fingerprintHost(cfg.AllocDir, cfg.Version), c.drivers)
	if err := c.loadNodeMeta(); err != nil {
		c.cancel()
		db.Close()
		return nil, fmt.Errorf("client: %w", err)
	}
	if err := fingerprintNetworkAndVolumes(&c.cfg, c.node); err != nil {
		c.cancel()
		db.Close()
		return nil, fmt.Errorf("client: %w", err)
	}
	c.netMgr = network.New(network.Config{
		CNIPath:   c.cfg.CNIPath,
		ConfigDir: c.cfg.CNIConfigDir,
		Bridge: network.BridgeConfig{
			Name: c.cfg.BridgeNetworkName, Subnet: c.cfg.BridgeNetworkSubnet, HairpinMode: c.cfg.BridgeNetworkHairpinMode,
			SubnetIPv6: c.cfg.BridgeNetworkSubnetIPv6,
		},
		StateDir:  filepath.Join(c.cfg.StateDir, "network"),
		Logger:    c.logger,
		Sandboxes: network.Creators(c.drivers),
	})
	c.netMgr.Fingerprint().Apply(c.node)
	c.health = driverHealth{drivers: c.node.Drivers, attrs: c.node.Attributes, class: c.node.ComputedClass}
	c.sync = newAllocSync(c)

	if err := c.restore(); err != nil {
		c.cancel()
		db.Close()
		return nil, err
	}
	// Namespaces of allocs an earlier client ran that are gone now.
	c.netMgr.CleanLeftovers(c.ctx, func(allocID string) bool { _, err := c.runner(allocID); return err == nil })
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.sync.run() }()
	go func() { defer c.wg.Done(); c.registerAndHeartbeat() }()
	go func() { defer c.wg.Done(); c.watchAllocs() }()
	c.wg.Add(1)
	go func() { defer c.wg.Done(); c.emitMaxRunMetrics() }()
	c.wg.Add(1)
	go func() { defer c.wg.Done(); c.watchDriverHealth() }()
	return c, nil
}

// NodeID returns the node's ID.
func (c *Client) NodeID() string { return c.node.ID }

// Node returns a copy of the node as registered.
func (c *Client) Node() *structs.Node { return c.nodeToRegister() }

// usableDrivers are the drivers that passed their fingerprint.
func (c *Client) usableDrivers() map[string]drivers.Driver {
	out := make(map[string]drivers.Driver)
	for name, d := range c.drivers {
		if info := c.driverInfo(name); info != nil && info.Detected && info.Healthy {
			out[name] = d
		}
	}
	return out
}

// restore rebuilds the alloc runners an earlier client persisted.
func (c *Client) restore() error {
	recs, err := c.db.Allocs()
	if err != nil {
		return fmt.Errorf("client: restore allocs: %w", err)
	}
	for _, rec := range recs {
		if err := c.addRunner(rec.Alloc, rec); err != nil {
			// Reported failed rather than left pending with no runner; the
			// update goes out once the client has registered.
			if derr := c.db.DeleteAlloc(rec.Alloc.ID); derr != nil {
				c.logger.Warn("cannot forget failed alloc", "alloc_id", rec.Alloc.ID, "error", derr)
			}
			c.failAlloc(rec.Alloc, err)
		}
	}
	return nil
}

// errClientClosed is addRunner's answer once the client is shutting
// down: the alloc is not at fault and must not be reported failed.
var errClientClosed = errors.New("client is shut down")

// addRunner builds and starts the runner of an alloc that is already in
// the client's state DB (restored, or persisted by the alloc watcher).
func (c *Client) addRunner(alloc *structs.Allocation, restored *state.AllocRecord) error {
	ar, err := allocrunner.New(allocrunner.Config{
		Alloc:        alloc,
		Logger:       c.logger,
		State:        c.db,
		AllocDirRoot: c.cfg.AllocDir,
		Drivers:      c.usableDrivers(),
		Node:         c.withDynamicMeta(c.node, false),
		Region:       c.cfg.Region,
		OnUpdate:     c.sync.update,
		OnOOMKill:    func() { c.oomKills.Add(1) },
		ExtraHooks:   append(append([]allocrunner.HookFactory(nil), c.cfg.ExtraAllocHooks...), allocrunner.ServiceHookFactory(c.rpc)),
		Restored:     restored,
		Variables:    variableSource{rpc: c.rpc, region: c.cfg.Region},
		Network:      c.netMgr,
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClientClosed
	}
	c.runners[alloc.ID] = ar
	c.mu.Unlock()
	go ar.Run()
	return nil
}

func (c *Client) runner(allocID string) (*allocrunner.AllocRunner, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ar, ok := c.runners[allocID]
	if !ok {
		// The caller named an alloc this node does not run: a 404 to an
		// HTTP caller, as Nomad answers.
		return nil, structs.NewErrRPCCodedf(http.StatusNotFound, "Unknown allocation %q", allocID)
	}
	return ar, nil
}

// AllocRunner returns the runner of an alloc on this client.
func (c *Client) AllocRunner(allocID string) (*allocrunner.AllocRunner, error) {
	return c.runner(allocID)
}

func (c *Client) allRunners() []*allocrunner.AllocRunner {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*allocrunner.AllocRunner, 0, len(c.runners))
	for _, ar := range c.runners {
		out = append(out, ar)
	}
	return out
}

// Shutdown stops the client without killing tasks: they keep running and
// the next client on the same data dir re-attaches to them. Pending
// status updates get one last chance to reach the servers.
func (c *Client) Shutdown() {
	c.stop(true)
}

// crash stops the client as abruptly as an in-process test can: no final
// status flush, the state DB just closed.
func (c *Client) crash() {
	c.stop(false)
}

func (c *Client) stop(flush bool) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	for _, ar := range c.allRunners() {
		ar.Shutdown()
	}
	if flush {
		c.sync.flushOnShutdown()
	}
	c.cancel()
	c.wg.Wait()
	// Drivers that follow their tasks from this process stop doing so;
	// the tasks run on for the next client to re-attach.
	for _, d := range c.drivers {
		if s, ok := d.(interface{ Shutdown() }); ok {
			s.Shutdown()
		}
	}
	if c.servers != nil {
		c.servers.close()
	}
	c.db.Close()
}

// Destroy kills every alloc's tasks, then shuts the client down.
func (c *Client) Destroy() {
	var wg sync.WaitGroup
	for _, ar := range c.allRunners() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ar.KillAll("client destroyed", allocrunner.KillAllOpts{SkipPoststop: true})
			<-ar.WaitCh()
		}()
	}
	wg.Wait()
	c.Shutdown()
}
