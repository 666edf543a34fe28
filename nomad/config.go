package nomad

import (
	"io"
	"net"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/nomad/eventbroker"
	"github.com/nomadq/nomadq/structs"
	"github.com/nomadq/nomadq/tlsutil"
)

// Config is everything a server needs to start. DefaultConfig fills in
// Nomad's defaults; the agent overrides what its config file sets.
type Config struct {
	// ACLEnabled makes every RPC check the caller's token (acl block).
	ACLEnabled bool
	// ACLTokenMinExpirationTTL and ACLTokenMaxExpirationTTL bound the
	// ExpirationTTL of new tokens (0: Nomad's defaults).
	ACLTokenMinExpirationTTL time.Duration
	ACLTokenMaxExpirationTTL time.Duration

	// NodeIntroduction is the client_introduction block: how node
	// registrations without a valid introduction token are treated and
	// how long minted tokens live.
	NodeIntroduction *structs.NodeIntroductionConfig

	// NodeName names the server in serf and Raft; unique in the cluster.
	NodeName   string
	Region     string
	Datacenter string

	// DataDir holds Raft's log and snapshots under server/raft. Required
	// unless DevMode.
	DataDir string

	// DevMode keeps Raft's log and snapshots in memory.
	DevMode bool

	// TLS, when set (tls.rpc), makes RPC and Raft mutual TLS: incoming
	// connections must open with the TLS byte (unless its
	// RPCUpgradeMode), outgoing ones do.
	TLS *tlsutil.Set

	// RPCAddr is where the RPC (and Raft) listener binds; port 0 picks a
	// free port, which RPCListener().Addr() then reports.
	RPCAddr *net.TCPAddr

	// RPCAdvertise is the address other servers dial; defaults to the
	// bound RPC address.
	RPCAdvertise *net.TCPAddr

	// SerfBindAddr and SerfPort are where server membership gossips
	// (Nomad's port 4648). Port 0 picks a free port.
	SerfBindAddr string
	SerfPort     int

	// SerfAdvertiseAddr is the address announced to other servers;
	// defaults to SerfBindAddr.
	SerfAdvertiseAddr string

	// EncryptKey is the gossip encryption key (server.encrypt, decoded)
	// that seeds the serf keyring file under DataDir on first start (see
	// SerfKeyringFile); empty leaves gossip in clear text unless that file
	// exists. 16, 24 or 32 bytes.
	EncryptKey []byte

	// BootstrapExpect is how many servers must join before the first
	// leader election. 1 bootstraps a single server at once.
	BootstrapExpect int

	// RetryJoin lists serf addresses ("host:port") of servers to join,
	// retried every RetryInterval up to RetryMax times (0: forever).
	RetryJoin     []string
	RetryInterval time.Duration
	RetryMax      int

	// NumSchedulers is the number of scheduling workers.
	NumSchedulers int

	// Raft tuning.
	RaftSnapshotThreshold uint64
	RaftSnapshotInterval  time.Duration
	RaftTrailingLogs      uint64
	RaftTimeout           time.Duration

	// Raft election timings; zero keeps hashicorp/raft's defaults (dev
	// mode shortens them). Lower values fail over faster on a quiet LAN.
	RaftHeartbeatTimeout   time.Duration
	RaftElectionTimeout    time.Duration
	RaftLeaderLeaseTimeout time.Duration

	// RPCHoldTimeout is how long a request waits for a leader.
	RPCHoldTimeout time.Duration

	// RPCHandshakeTimeout bounds how long a new RPC connection may take
	// to say what it carries, and its TLS handshake; 0 means no bound.
	RPCHandshakeTimeout time.Duration
	// RPCMaxConnsPerClient caps the RPC connections one IP address holds
	// open at once; 0 means no cap (limits block, as in Nomad).
	RPCMaxConnsPerClient int

	// Heartbeats: a node's TTL is max(MinHeartbeatTTL, nodes /
	// MaxHeartbeatsPerSecond) plus a random stagger of up to that; it is
	// marked down after TTL + HeartbeatGrace. After a failover every node
	// gets FailoverHeartbeatTTL.
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	HeartbeatGrace         time.Duration
	FailoverHeartbeatTTL   time.Duration

	// Garbage collection of terminal objects.
	EvalGCInterval       time.Duration
	EvalGCThreshold      time.Duration
	BatchEvalGCThreshold time.Duration
	JobGCInterval        time.Duration
	JobGCThreshold       time.Duration
	NodeGCInterval       time.Duration
	NodeGCThreshold      time.Duration

	// Eval broker tuning.
	EvalNackTimeout          time.Duration
	EvalDeliveryLimit        int
	EvalNackInitialReenqueue time.Duration
	EvalNackSubsequentDelay  time.Duration

	// DisableEventBroker turns the event stream off (Nomad's
	// enable_event_broker = false); EventBufferSize is how many Raft
	// entries' events it keeps for slow readers and index= resumes (0:
	// eventbroker.DefaultBufferSize).
	DisableEventBroker bool
	EventBufferSize    int

	// JobMaxCount is job_max_count: the most allocations a job may ask
	// for, as one group's count and as the sum of its groups' counts
	// (structs.Job.CheckMaxCount); register, plan, scale and revert
	// refuse more. 0 means no limit.
	JobMaxCount int

	// JobMaxPriority is job_max_priority: the highest priority register,
	// plan and revert accept (structs.Job.CheckPriority).
	// JobDefaultPriority is job_default_priority: the priority of a job
	// submitted without one (or with 0).
	JobMaxPriority     int
	JobDefaultPriority int

	// DefaultSchedulerConfig seeds the scheduler configuration when the
	// cluster first bootstraps.
	DefaultSchedulerConfig *structs.SchedulerConfiguration

	Logger    hclog.Logger
	LogOutput io.Writer

	// Metrics receives the server's timings (plan apply and evaluate,
	// worker dequeue and invoke, Raft apply). Nil discards them.
	Metrics *metrics.Metrics
}

// DefaultConfig returns Nomad's server defaults.
func DefaultConfig() *Config {
	return &Config{
		NodeName:                 "server",
		NodeIntroduction:         structs.DefaultNodeIntroductionConfig(),
		Region:                   structs.DefaultRegion,
		Datacenter:               "dc1",
		RPCAddr:                  &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4647},
		SerfBindAddr:             "127.0.0.1",
		SerfPort:                 4648,
		BootstrapExpect:          1,
		RetryInterval:            30 * time.Second,
		NumSchedulers:            max(runtime.NumCPU(), 1),
		RaftSnapshotThreshold:    8192,
		RaftSnapshotInterval:     120 * time.Second,
		RaftTrailingLogs:         10240,
		RaftTimeout:              10 * time.Second,
		RPCHoldTimeout:           5 * time.Second,
		RPCHandshakeTimeout:      5 * time.Second,
		MinHeartbeatTTL:          10 * time.Second,
		MaxHeartbeatsPerSecond:   50,
		HeartbeatGrace:           10 * time.Second,
		FailoverHeartbeatTTL:     300 * time.Second,
		EvalGCInterval:           5 * time.Minute,
		EvalGCThreshold:          1 * time.Hour,
		BatchEvalGCThreshold:     24 * time.Hour,
		JobGCInterval:            5 * time.Minute,
		JobGCThreshold:           4 * time.Hour,
		NodeGCInterval:           5 * time.Minute,
		NodeGCThreshold:          24 * time.Hour,
		EvalNackTimeout:          60 * time.Second,
		EvalDeliveryLimit:        evalbroker.DefaultDeliveryLimit,
		EvalNackInitialReenqueue: 1 * time.Second,
		EvalNackSubsequentDelay:  20 * time.Second,
		JobMaxCount:              structs.JobDefaultMaxCount,
		JobMaxPriority:           structs.JobMaxPriority,
		JobDefaultPriority:       structs.JobDefaultPriority,
		DefaultSchedulerConfig:   structs.DefaultSchedulerConfiguration(),
	}
}

// eventBroker returns the broker the config asks for, nil when the event
// stream is disabled.
func (c *Config) eventBroker() *eventbroker.Broker {
	if c.DisableEventBroker {
		return nil
	}
	return eventbroker.New(c.EventBufferSize)
}
