// Package sim is the node simulator: thousands of simulated client nodes
// in one process (nomad agent -sim-nodes N). Each node registers,
// heartbeats, watches its allocs and reports their status over the same
// RPCs as a real client, and runs its tasks with mock_driver semantics in
// memory, so that a small machine can drive a large cluster.
//
// It is built to be cheap per node: one timer heap and one goroutine
// drive every heartbeat and every task, a fixed pool of workers makes
// the RPCs, and the nodes' allocs are watched a batch of nodes per
// blocking query (Node.GetClientAllocsBatch) instead of one query each.
package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/structs"
)

// Defaults of a simulated node's resources.
const (
	DefaultCPU      = 4000
	DefaultMemoryMB = 8192
	DefaultDiskMB   = 100 * 1024
)

// Config configures a simulator.
type Config struct {
	// Count is how many nodes to simulate (at least 1).
	Count int
	// NamePrefix names the nodes <prefix>-0001, <prefix>-0002, ...;
	// default "sim".
	NamePrefix string

	Region     string
	Datacenter string
	NodePool   string
	NodeClass  string
	Meta       map[string]string
	// IntroToken is the client introduction token every node sends on
	// registration ("" for none); one naming no node name fits them all.
	IntroToken string
	// Version is the nomad.version attribute.
	Version string

	// CPU (MHz), MemoryMB and DiskMB are each node's resources; zero
	// means the defaults above.
	CPU      int64
	MemoryMB int64
	DiskMB   int64

	// RPC reaches the servers (client.InProcessRPC or a
	// client.ServerRPC); the simulator does not close it.
	RPC client.RPC
	// Learn, when set, is told the servers' addresses that registrations
	// and heartbeats answer (a client.ServerRPC's Learn).
	Learn func(addrs []string)

	Logger hclog.Logger

	// Workers is how many RPCs may be in flight at once (besides the
	// alloc watches); default 32.
	Workers int
	// WatchBatch is how many nodes one blocking alloc watch covers;
	// default 128.
	WatchBatch int
	// SyncInterval bounds how long a non-terminal alloc update waits to
	// be batched with others; default 200 ms, as a real client.
	SyncInterval time.Duration
	// RetryInterval is the wait after a failed RPC; default 1 s.
	RetryInterval time.Duration
}

func (c *Config) setDefaults() error {
	if c.Count < 1 {
		return fmt.Errorf("sim_nodes: %d is not a valid node count: must be at least 1", c.Count)
	}
	if c.RPC == nil {
		return errors.New("node simulator: no RPC to reach the servers")
	}
	if c.NamePrefix == "" {
		c.NamePrefix = "sim"
	}
	if c.Datacenter == "" {
		c.Datacenter = "dc1"
	}
	if c.NodePool == "" {
		c.NodePool = structs.DefaultNodePool
	}
	if c.CPU <= 0 {
		c.CPU = DefaultCPU
	}
	if c.MemoryMB <= 0 {
		c.MemoryMB = DefaultMemoryMB
	}
	if c.DiskMB <= 0 {
		c.DiskMB = DefaultDiskMB
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.WatchBatch <= 0 {
		c.WatchBatch = 128
	}
	if c.SyncInterval <= 0 {
		c.SyncInterval = 200 * time.Millisecond
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = time.Second
	}
	return nil
}

// Sim is a running set of simulated nodes.
type Sim struct {
	cfg      Config
	logger   hclog.Logger
	template *structs.Node
	nodes    []*node

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sched *scheduler
	work  chan func()
	sync  *statusSync

	registered atomic.Int64
	ready      chan struct{}
	readyOnce  sync.Once
	stopOnce   sync.Once
}

// node is one simulated node. Its fields after the secret belong to the
// goroutine that owns that part of its life: registration and heartbeats
// run one at a time per node, its allocs only on the scheduler.
type node struct {
	idx        int
	id, secret string
	name       string
	batch      *watchBatch

	// allocs are the allocs the node runs, by ID (scheduler only).
	allocs map[string]*simAlloc
}

// New starts a simulator: its nodes register at once, as fast as the
// workers go, then heartbeat and run what is placed on them.
func New(cfg Config) (*Sim, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	s := &Sim{
		cfg:    cfg,
		logger: cfg.Logger.Named("sim"),
		work:   make(chan func(), cfg.Count+cfg.Workers),
		ready:  make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.template = nodeTemplate(&s.cfg)
	s.sched = newScheduler()
	s.sync = newStatusSync(s)
	width := len(fmt.Sprint(cfg.Count))
	width = max(width, 4)
	s.nodes = make([]*node, cfg.Count)
	var batch *watchBatch
	for i := range s.nodes {
		if i%cfg.WatchBatch == 0 {
			batch = &watchBatch{s: s, ready: make(chan struct{})}
		}
		n := &node{
			idx:    i,
			id:     structs.GenerateUUID(),
			secret: structs.GenerateUUID(),
			name:   fmt.Sprintf("%s-%0*d", cfg.NamePrefix, width, i+1),
			batch:  batch,
		}
		batch.nodes = append(batch.nodes, n)
		s.nodes[i] = n
	}

	s.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go func() { defer s.wg.Done(); s.worker() }()
	}
	s.wg.Add(2)
	go func() { defer s.wg.Done(); s.sched.run(s.ctx) }()
	go func() { defer s.wg.Done(); s.sync.run() }()
	seen := make(map[*watchBatch]bool)
	for _, n := range s.nodes {
		if b := n.batch; !seen[b] {
			seen[b] = true
			s.wg.Add(1)
			go func() { defer s.wg.Done(); b.run() }()
		}
	}
	for _, n := range s.nodes {
		s.submit(func() { s.register(n) })
	}
	s.logger.Info("node simulator started", "nodes", cfg.Count, "cpu_mhz", cfg.CPU, "memory_mb", cfg.MemoryMB)
	return s, nil
}

// NodeIDs returns the IDs of the simulated nodes, in name order.
func (s *Sim) NodeIDs() []string {
	out := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.id
	}
	return out
}

// FirstNode returns the ID and secret of the first node (sim-0001).
func (s *Sim) FirstNode() (id, secret string) { return s.nodes[0].id, s.nodes[0].secret }

// Registered is how many nodes have registered at least once.
func (s *Sim) Registered() int { return int(s.registered.Load()) }

// Ready is closed once every node has registered.
func (s *Sim) Ready() <-chan struct{} { return s.ready }

// RPC calls the servers the simulator reaches (a client-only agent's
// HTTP API uses it).
func (s *Sim) RPC(method string, args, reply any) error {
	return s.cfg.RPC.Call(s.ctx, method, args, reply)
}

// Shutdown stops every node as a real client stops: pending status
// updates get one short try, then nothing more is sent. The servers
// mark the nodes down when their heartbeats lapse, as they do for
// nomad-nodesim and for real clients that stop.
func (s *Sim) Shutdown() {
	s.stopOnce.Do(func() {
		s.sync.flushOnShutdown()
		s.cancel()
		s.wg.Wait()
	})
}

// submit queues an RPC job for the workers; false means the simulator
// is shutting down and f will not run.
func (s *Sim) submit(f func()) bool {
	select {
	case s.work <- f:
		return true
	case <-s.ctx.Done():
		return false
	}
}

func (s *Sim) worker() {
	for {
		select {
		case f := <-s.work:
			f()
		case <-s.ctx.Done():
			return
		}
	}
}

// call makes one RPC with a timeout, authenticated as node n.
func (s *Sim) call(method string, args, reply any) error {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	return s.cfg.RPC.Call(ctx, method, args, reply)
}
