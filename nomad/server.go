package nomad

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/nomad/batchqueue"
	"github.com/nomadq/nomadq/nomad/blockedevals"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/nomad/eventbroker"
	"github.com/nomadq/nomadq/nomad/fsm"
	"github.com/nomadq/nomadq/nomad/inmemsnapshots"
	"github.com/nomadq/nomadq/nomad/internal/groupcommit"
	"github.com/nomadq/nomadq/nomad/keyring"
	"github.com/nomadq/nomadq/nomad/planqueue"
	"github.com/nomadq/nomadq/nomad/varlock"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Server is a nomadq server: it stores every change through Raft, answers
// RPCs, and while it leads, runs the scheduling machinery.
type Server struct {
	config *Config
	logger hclog.Logger
	nodeID string

	fsm *fsm.FSM
	// allocUpdates group-commits the clients' alloc status updates.
	allocUpdates  *groupcommit.Committer[*structs.AllocUpdateRequest]
	varLocks      *varlock.Leases
	raft          *raft.Raft
	raftLayer     *raftLayer
	raftTransport *raft.NetworkTransport
	raftStore     raftStore
	raftMeta      io.Closer
	raftSnaps     raft.SnapshotStore
	// raftTimeouts holds the configured Raft timeouts while a lone
	// server's election runs with a shorter one (standIfAlone); nil
	// otherwise. Guarded by leaderLock once the server runs.
	raftTimeouts *raft.ReloadableConfig
	leaderCh     <-chan bool

	rpcListener  net.Listener
	rpcAdvertise net.Addr
	rpcServer    *rpc.Server
	aclCache     aclCache
	// leaderACL is a management secret that only this process knows; the
	// server uses it for the calls it makes to itself (marking a node
	// down), which must pass the ACL check like any other.
	leaderACL string
	connPool  *msgpackrpc.Pool
	conns     map[net.Conn]struct{}
	connsLock sync.Mutex

	serf    *serf.Serf
	eventCh chan serf.Event

	// Leader-only structures, enabled while this server leads.
	evalBroker   *evalbroker.Broker
	blockedEvals *blockedevals.Tracker
	planQueue    *planqueue.Queue
	heartbeats   *heartbeater
	batchQueue   *batchqueue.Queue
	workerPool   *workerPool
	autopilot    *autopilotHealth

	// keyring signs workload identities with the root keys of state.
	keyring *keyring.Keyring

	leaderLock   sync.Mutex
	leaderCancel func()
	leaderDone   chan struct{}

	shutdown   bool
	shutdownCh chan struct{}
	// fatalCh is closed, and fatalErr set, when the server stops on its
	// own (raft_fault.go).
	fatalCh      chan struct{}
	fatalErr     error
	shutdownLock sync.Mutex
	wg           sync.WaitGroup
}

// raftStore is the log and stable store, closed on shutdown.
type raftStore interface {
	raft.LogStore
	raft.StableStore
}

// NewServer starts a server: Raft, the RPC listener, serf membership and
// the leadership monitor. It returns once everything listens; the first
// election happens in the background.
func NewServer(config *Config) (*Server, error) {
	if config.Logger == nil {
		config.Logger = hclog.NewNullLogger()
	}
	if !config.DevMode && config.DataDir == "" {
		return nil, errors.New("server: data_dir is required outside dev mode")
	}
	s := &Server{
		config:     config,
		logger:     config.Logger.Named("server"),
		rpcServer:  rpc.NewServer(),
		leaderACL:  structs.GenerateUUID(),
		connPool:   msgpackrpc.NewPool(config.RaftTimeout),
		conns:      make(map[net.Conn]struct{}),
		eventCh:    make(chan serf.Event, 256),
		shutdownCh: make(chan struct{}),
		fatalCh:    make(chan struct{}),
		keyring:    keyring.New(),
	}
	if config.TLS != nil {
		s.connPool.UseTLS(config.TLS.OutgoingRPC())
	}
	var err error
	if s.nodeID, err = s.loadNodeID(); err != nil {
		return nil, err
	}

	s.evalBroker, err = evalbroker.New(config.EvalNackTimeout, config.EvalNackInitialReenqueue, config.EvalNackSubsequentDelay, config.EvalDeliveryLimit)
	if err != nil {
		return nil, err
	}
	s.blockedEvals = blockedevals.New(s.evalBroker, s.logger)
	s.planQueue = planqueue.New()
	s.heartbeats = newHeartbeater(s)
	s.batchQueue = s.newBatchQueue()
	s.workerPool = newWorkerPool(s, config.NumSchedulers)
	s.autopilot = newAutopilotHealth()
	s.varLocks = varlock.New(s.expireVariableLock)
	s.allocUpdates = groupcommit.New(maxAllocUpdateBatch, s.applyAllocUpdates)

	if s.fsm, err = fsm.New(s.logger, s.blockedEvals, s.evalBroker); err != nil {
		return nil, err
	}
	s.fsm.SetBatchQueueFeed(s.batchQueue.Feed)
	s.fsm.SetEventBroker(config.eventBroker())
	if err := s.setupRPC(); err != nil {
		s.Shutdown()
		return nil, err
	}
	if err := s.setupRaft(); err != nil {
		s.Shutdown()
		return nil, err
	}
	if err := s.setupSerf(); err != nil {
		s.Shutdown()
		return nil, err
	}
	go s.watchFSMFault()
	s.goRun(s.listenRPC)
	s.goRun(s.monitorLeadership)
	s.goRun(s.serfEventHandler)
	if len(config.RetryJoin) > 0 {
		s.goRun(s.retryJoin)
	}
	return s, nil
}

func (s *Server) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// loadNodeID returns the server's persistent ID, creating it on first
// start; dev servers get a fresh one each time.
func (s *Server) loadNodeID() (string, error) {
	if s.config.DevMode {
		return structs.GenerateUUID(), nil
	}
	dir := filepath.Join(s.config.DataDir, "server")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("server: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "node-id")
	if buf, err := os.ReadFile(path); err == nil && len(buf) > 0 {
		return string(buf), nil
	}
	id := structs.GenerateUUID()
	if err := os.WriteFile(path, []byte(id), 0o600); err != nil {
		return "", fmt.Errorf("server: write %s: %w", path, err)
	}
	return id, nil
}

func (s *Server) setupRPC() error {
	for name, endpoint := range s.endpoints() {
		if err := s.rpcServer.RegisterName(name, endpoint); err != nil {
			return fmt.Errorf("server: register %s endpoint: %w", name, err)
		}
	}
	l, err := net.ListenTCP("tcp", s.config.RPCAddr)
	if err != nil {
		return fmt.Errorf("server: listen for RPC on %s: %w", s.config.RPCAddr, err)
	}
	s.rpcListener = l
	s.rpcAdvertise = l.Addr()
	if a := s.config.RPCAdvertise; a != nil && !a.IP.IsUnspecified() {
		if a.Port == 0 {
			a = &net.TCPAddr{IP: a.IP, Port: l.Addr().(*net.TCPAddr).Port}
		}
		s.rpcAdvertise = a
	}
	s.raftLayer = newRaftLayer(s.rpcAdvertise)
	if s.config.TLS != nil {
		s.raftLayer.tls = s.config.TLS.OutgoingRPC()
	}
	return nil
}

// A dev server's Raft log compaction: entries kept after a snapshot, the
// new entries that call for one, and how often (at random between one and
// two times this) that threshold is checked. Its entries (each an encoded
// job, plan or batch of client updates, 2 to 12 KB) live in memory, and no
// follower ever needs the old ones. Its snapshots cost next to nothing
// (the store defers encoding the state until one is read; see
// inmemsnapshots.Store), so it compacts often and the log stays short
// however fast entries arrive: at most a few thousand entries.
const (
	devRaftTrailingLogs      = 128
	devRaftSnapshotThreshold = 256
	devRaftSnapshotInterval  = time.Second
)

func (s *Server) setupRaft() error {
	s.raftTransport = raft.NewNetworkTransportWithLogger(s.raftLayer, 3, s.config.RaftTimeout, s.logger.Named("raft-net"))

	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(s.nodeID)
	conf.Logger = s.logger.Named("raft")
	conf.SnapshotThreshold = s.config.RaftSnapshotThreshold
	conf.SnapshotInterval = s.config.RaftSnapshotInterval
	conf.TrailingLogs = s.config.RaftTrailingLogs
	leaderCh := make(chan bool, 10)
	conf.NotifyCh = leaderCh
	s.leaderCh = leaderCh
	if s.config.DevMode {
		// One in-memory server elects itself fast.
		conf.HeartbeatTimeout = 200 * time.Millisecond
		conf.ElectionTimeout = 200 * time.Millisecond
		conf.LeaderLeaseTimeout = 100 * time.Millisecond
		// Its log lives in memory and no follower ever needs old entries
		// to catch up: compact it often, or a burst of jobs leaves
		// thousands of encoded entries (tens of MB) held until the
		// default 8,192-entry threshold is checked, every two minutes.
		conf.TrailingLogs = min(conf.TrailingLogs, devRaftTrailingLogs)
		conf.SnapshotThreshold = min(conf.SnapshotThreshold, devRaftSnapshotThreshold)
		conf.SnapshotInterval = min(conf.SnapshotInterval, devRaftSnapshotInterval)
	}
	if d := s.config.RaftHeartbeatTimeout; d > 0 {
		conf.HeartbeatTimeout = d
	}
	if d := s.config.RaftElectionTimeout; d > 0 {
		conf.ElectionTimeout = d
	}
	if d := s.config.RaftLeaderLeaseTimeout; d > 0 {
		conf.LeaderLeaseTimeout = d
	}

	var snaps raft.SnapshotStore
	if s.config.DevMode {
		store := raft.NewInmemStore()
		s.raftStore = store
		snaps = &inmemsnapshots.Store{}
	} else {
		dir := filepath.Join(s.config.DataDir, "server", "raft")
		if err := os.MkdirAll(filepath.Join(dir, "wal"), 0o700); err != nil {
			return fmt.Errorf("server: create raft dir: %w", err)
		}
		// The WAL does not close a meta store it opened itself, so give
		// it one we close on shutdown (its bolt file lock would otherwise
		// outlive the server).
		meta := &metadb.BoltMetaDB{}
		walDir := filepath.Join(dir, "wal")
		w, err := openWALStore(walDir, s.logger.Named("raft-wal"), func() (*wal.WAL, error) {
			return wal.Open(walDir, wal.WithLogger(s.logger.Named("raft-wal")), wal.WithMetaStore(meta))
		})
		if err != nil {
			_ = meta.Close()
			return fmt.Errorf("server: open raft log: %w", err)
		}
		s.raftStore = w
		s.raftMeta = meta
		fss, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, s.logger.Named("raft-snap"))
		if err != nil {
			return fmt.Errorf("server: open raft snapshots: %w", err)
		}
		snaps = fss
	}

	if s.config.BootstrapExpect == 1 {
		has, err := raft.HasExistingState(s.raftStore, s.raftStore, snaps)
		if err != nil {
			return fmt.Errorf("server: read raft state: %w", err)
		}
		if !has {
			cfg := raft.Configuration{Servers: []raft.Server{{
				ID:      raft.ServerID(s.nodeID),
				Address: raft.ServerAddress(s.rpcAdvertise.String()),
			}}}
			if err := raft.BootstrapCluster(conf, s.raftStore, s.raftStore, snaps, s.raftTransport, cfg); err != nil {
				return fmt.Errorf("server: bootstrap raft: %w", err)
			}
		}
	}

	s.raftSnaps = snaps
	startSnaps := snaps
	var reachable *reachableSnapshots
	if !s.config.DevMode {
		first, err := s.raftStore.FirstIndex()
		if err != nil {
			return fmt.Errorf("server: read raft log: %w", err)
		}
		reachable = &reachableSnapshots{SnapshotStore: snaps, first: first}
		startSnaps = reachable
	}
	r, err := raft.NewRaft(conf, s.fsm, s.raftStore, s.raftStore, startSnaps, s.raftTransport)
	if err != nil {
		if reachable != nil {
			return reachable.startErr(filepath.Join(s.config.DataDir, "server", "raft"), err)
		}
		return fmt.Errorf("server: start raft: %w", err)
	}
	s.raft = r
	if err := s.standIfAlone(*conf); err != nil {
		// The election only waits for the usual heartbeat timeout.
		s.logger.Warn("cannot stand for election at once", "error", err)
	}
	return nil
}

// IsLeader reports whether this server leads the cluster.
func (s *Server) IsLeader() bool { return s.raft != nil && s.raft.State() == raft.Leader }

// Leader returns the leader's RPC address, "" when none is known.
func (s *Server) Leader() string {
	addr, _ := s.raft.LeaderWithID()
	return string(addr)
}

// State returns the server's state store. Callers must not write to it.
func (s *Server) State() *state.StateStore { return s.fsm.State() }

// EventBroker returns the server's event broker, nil when the event
// stream is disabled.
func (s *Server) EventBroker() *eventbroker.Broker { return s.fsm.EventBroker() }

// RPCAddr is the address other servers and clients dial.
func (s *Server) RPCAddr() net.Addr { return s.rpcAdvertise }

// SerfAddr is the address servers join (retry_join).
func (s *Server) SerfAddr() string {
	m := s.serf.LocalMember()
	return net.JoinHostPort(m.Addr.String(), fmt.Sprint(m.Port))
}

// NodeID is the server's Raft ID.
func (s *Server) NodeID() string { return s.nodeID }

// Config returns the server's configuration.
func (s *Server) Config() *Config { return s.config }

func (s *Server) isShutdown() bool {
	s.shutdownLock.Lock()
	defer s.shutdownLock.Unlock()
	return s.shutdown
}

// Shutdown stops the server: it leaves serf, stops Raft and closes every
// listener and connection. It is safe to call more than once.
func (s *Server) Shutdown() error {
	s.shutdownLock.Lock()
	if s.shutdown {
		s.shutdownLock.Unlock()
		return nil
	}
	s.shutdown = true
	close(s.shutdownCh)
	s.shutdownLock.Unlock()

	// A leader that stops on purpose hands leadership over first, so the
	// cluster does not wait out an election timeout.
	if s.IsLeader() && s.hasPeers() {
		if err := s.raft.LeadershipTransfer().Error(); err != nil {
			s.logger.Warn("leadership transfer before shutdown failed", "error", err)
		}
	}
	s.revokeLeadership()
	s.fsm.CloseEvents()
	if s.serf != nil {
		_ = s.serf.Leave()
		_ = s.serf.Shutdown()
	}
	if s.raft != nil {
		if err := s.raft.Shutdown().Error(); err != nil {
			s.logger.Warn("raft shutdown", "error", err)
		}
	}
	if s.raftLayer != nil {
		s.raftLayer.Close()
	}
	if s.raftTransport != nil {
		s.raftTransport.Close()
	}
	if s.rpcListener != nil {
		s.rpcListener.Close()
	}
	s.connsLock.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.connsLock.Unlock()
	s.connPool.Shutdown()
	s.wg.Wait()
	if c, ok := s.raftStore.(io.Closer); ok {
		_ = c.Close()
	}
	if s.raftMeta != nil {
		_ = s.raftMeta.Close()
	}
	return nil
}

// hasPeers reports whether Raft has voters other than this server.
func (s *Server) hasPeers() bool {
	future := s.raft.GetConfiguration()
	if future.Error() != nil {
		return false
	}
	return len(future.Configuration().Servers) > 1
}
