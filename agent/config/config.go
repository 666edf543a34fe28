// Package config is the nomadq agent's configuration: its types, Nomad's
// defaults and -dev's, loading config files and directories, decoding
// Nomad's agent config format (HCL or JSON, with file:line,column in every
// error and warning) and validating the result. It only reads files: it
// starts nothing, touches no network and does not import the agent, server
// or client packages, which take a *Config and do the starting
// (enforced by deps_test.go).
package config

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nomadq/nomadq/structs"
	"github.com/nomadq/nomadq/tlsutil"
)

// Default ports, as Nomad's.
const (
	DefaultHTTPPort = 4646
	DefaultRPCPort  = 4647
	DefaultSerfPort = 4648
)

// DefaultMaxRequestBody is the largest request body the HTTP API reads.
const DefaultMaxRequestBody = 10 << 20

// Config is the agent configuration: what the config files and the
// command-line flags set. JSON keys in /v1/agent/self are the Go names.
type Config struct {
	Name       string
	Region     string
	Datacenter string
	DataDir    string
	BindAddr   string
	LogLevel   string
	LogJSON    bool
	// EnableDebug opens the agent's debug endpoints (/v1/agent/pprof/,
	// /v1/agent/host) when ACLs are off; -dev turns it on, as Nomad's.
	EnableDebug bool

	Ports          *Ports
	Addresses      *Addresses
	AdvertiseAddrs *Addresses

	Server    *Server
	Client    *Client
	Plugins   []*Plugin
	Telemetry *Telemetry
	ACL       *ACL
	// TLS is the tls block: HTTPS on the API, mutual TLS on RPC and
	// Raft (website/security.md). /v1/agent/self shows it under
	// Nomad's name.
	TLS *tlsutil.Config `json:"TLSConfig"`

	// UI is what the CLI reads to decide whether to print web UI hints;
	// nomadq has no web UI, so hints are off.
	UI *UI

	// DevMode runs server and client in memory (nomad agent -dev).
	DevMode bool

	// MaxRequestBody is the HTTP request body limit in bytes
	// (limits.http_max_request_bytes); 0 means no limit.
	MaxRequestBody int64

	// Limits is the limits block: per-client connection caps and
	// handshake timeouts, as Nomad reads them.
	Limits Limits

	// Files lists the config files that were loaded, in order.
	Files []string
}

// Limits is the limits block. A cap of 0 means no limit and a timeout
// of 0 means none, as in Nomad.
type Limits struct {
	// HTTPSHandshakeTimeout bounds the TLS handshake of an HTTPS
	// connection.
	HTTPSHandshakeTimeout time.Duration
	// HTTPMaxConnsPerClient caps the HTTP connections one IP address
	// holds open at once; more get a 429 and are closed.
	HTTPMaxConnsPerClient int
	// RPCHandshakeTimeout bounds how long a new RPC connection may take
	// to say what it carries (and, with TLS, to finish the handshake).
	RPCHandshakeTimeout time.Duration
	// RPCMaxConnsPerClient caps the RPC connections one IP address holds
	// open to a server at once; more are closed.
	RPCMaxConnsPerClient int
	// HTTPMaxBlockingQueriesPerClient caps the blocking queries one IP
	// address holds at once; more are answered 429 (nomadq's own key).
	HTTPMaxBlockingQueriesPerClient int
	// HTTPMaxLogStreamsPerClient caps the log streams one IP address
	// holds at once; more are answered 429 (nomadq's own key).
	HTTPMaxLogStreamsPerClient int
}

// MarshalJSON shows the limits in /v1/agent/self as Nomad does: the
// timeouts as duration strings, under Nomad's names, and nomadq's own
// keys beside them.
func (l Limits) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		HTTPSHandshakeTimeout           string
		HTTPMaxConnsPerClient           int
		RPCHandshakeTimeout             string
		RPCMaxConnsPerClient            int
		HTTPMaxBlockingQueriesPerClient int
		HTTPMaxLogStreamsPerClient      int
	}{
		l.HTTPSHandshakeTimeout.String(), l.HTTPMaxConnsPerClient,
		l.RPCHandshakeTimeout.String(), l.RPCMaxConnsPerClient,
		l.HTTPMaxBlockingQueriesPerClient, l.HTTPMaxLogStreamsPerClient,
	})
}

// DefaultLimits returns Nomad's defaults for the limits block.
func DefaultLimits() Limits {
	return Limits{
		HTTPSHandshakeTimeout: 5 * time.Second,
		HTTPMaxConnsPerClient: 100,
		RPCHandshakeTimeout:   5 * time.Second,
		RPCMaxConnsPerClient:  100,
		// As many as the connection cap lets through over HTTP/1.1.
		HTTPMaxBlockingQueriesPerClient: 100,
		HTTPMaxLogStreamsPerClient:      100,
	}
}

// ACL is the acl block: whether requests must carry a token, and
// how long an agent keeps what it resolved.
type ACL struct {
	Enabled bool
	// TokenTTL, PolicyTTL and RoleTTL bound how long a resolved token
	// (with its policies and roles) is cached by an agent that is not a
	// server; servers resolve from their own state on every request.
	TokenTTL  time.Duration
	PolicyTTL time.Duration
	RoleTTL   time.Duration
	// TokenMinExpirationTTL and TokenMaxExpirationTTL bound the
	// ExpirationTTL of new tokens.
	TokenMinExpirationTTL time.Duration
	TokenMaxExpirationTTL time.Duration
}

// CacheTTL is how long an agent that is not a server may keep what a
// token resolved to: that holds the token, its policies and its roles,
// so the shortest of their TTLs bounds it.
func (c *ACL) CacheTTL() time.Duration {
	return min(c.TokenTTL, c.PolicyTTL, c.RoleTTL)
}

// DefaultACL returns Nomad's defaults for the acl block.
func DefaultACL() *ACL {
	return &ACL{TokenTTL: 30 * time.Second, PolicyTTL: 30 * time.Second, RoleTTL: 30 * time.Second,
		TokenMinExpirationTTL: structs.MinACLTokenExpirationTTL, TokenMaxExpirationTTL: structs.MaxACLTokenExpirationTTL}
}

// Ports are the agent's listening ports. Port 0 picks a free port.
type Ports struct {
	HTTP int
	RPC  int
	Serf int
}

// Addresses override bind_addr (or the advertised address) per listener.
type Addresses struct {
	HTTP string
	RPC  string
	Serf string
}

// Server is the server block.
type Server struct {
	Enabled         bool
	BootstrapExpect int
	NumSchedulers   int
	RetryJoin       []string
	RetryInterval   time.Duration
	RetryMax        int

	// DisableEventBroker is enable_event_broker = false: no event
	// stream. EventBufferSize is event_buffer_size (0: Nomad's 100).
	DisableEventBroker bool
	EventBufferSize    int

	// JobMaxCount is job_max_count: the most allocations one job may ask
	// for, as a group's count and as the sum of its groups' counts.
	// Default sets Nomad's default, 50,000; 0 means no limit.
	JobMaxCount int

	// JobMaxPriority is job_max_priority: the highest priority a job may
	// have, between 100 (Nomad's default) and 32766. JobDefaultPriority
	// is job_default_priority: the priority of a job submitted without
	// one, from 50 (Nomad's default) to below JobMaxPriority. Default
	// sets Nomad's defaults; 0 means them too.
	JobMaxPriority     int
	JobDefaultPriority int

	// NodeGCThreshold, JobGCInterval, JobGCThreshold, EvalGCThreshold
	// and BatchEvalGCThreshold are Nomad's keys of those names: how old
	// a down node, a dead job or a terminal eval must be before the
	// leader's periodic garbage collection removes it, and how often the
	// job collection runs. 0 means Nomad's default.
	NodeGCThreshold      time.Duration
	JobGCInterval        time.Duration
	JobGCThreshold       time.Duration
	EvalGCThreshold      time.Duration
	BatchEvalGCThreshold time.Duration

	// HeartbeatGrace, MinHeartbeatTTL, MaxHeartbeatsPerSecond and
	// FailoverHeartbeatTTL are Nomad's keys of those names: how nodes'
	// heartbeat TTLs are sized and how late a heartbeat may be before
	// the node is marked down. 0 means Nomad's default.
	HeartbeatGrace         time.Duration
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	FailoverHeartbeatTTL   time.Duration

	// RaftSnapshotThreshold, RaftSnapshotInterval and RaftTrailingLogs
	// are Nomad's raft_snapshot_threshold, raft_snapshot_interval and
	// raft_trailing_logs. 0 means Nomad's default.
	RaftSnapshotThreshold int
	RaftSnapshotInterval  time.Duration
	RaftTrailingLogs      int

	// DefaultSchedulerConfig seeds the cluster's scheduler configuration
	// at bootstrap, including the batch queue settings.
	DefaultSchedulerConfig *structs.SchedulerConfiguration

	// ClientIntroduction is the client_introduction block: enforcement
	// of introduction tokens on node registration and the lifetime of
	// the tokens this server mints. nil means Nomad's defaults.
	ClientIntroduction *structs.NodeIntroductionConfig

	// EncryptKey is server.encrypt (or -encrypt): the base64 gossip key
	// that seeds the serf keyring on first start. A secret, so it never
	// shows in /v1/agent/self, as in Nomad.
	EncryptKey string `json:"-"`
}

// Client is the client block.
type Client struct {
	Enabled   bool
	Servers   []string
	NodePool  string
	NodeClass string
	Meta      map[string]string
	Options   map[string]string
	// ChrootEnv maps host paths to their place in exec tasks' chroots;
	// empty means the exec driver's defaults.
	ChrootEnv map[string]string

	// MinDynamicPort and MaxDynamicPort bound the host ports the
	// scheduler gives dynamic ports on this node; 0 means Nomad's
	// default (20000-32000).
	MinDynamicPort int
	MaxDynamicPort int
	// NetworkInterface names the interface whose first address tasks
	// are reached at (NOMAD_IP_<label>); "" means the address the agent
	// advertises.
	NetworkInterface string
	// HostVolumes are the host_volume blocks: directories jobs may
	// mount, by name.
	HostVolumes []*structs.ClientHostVolumeConfig
	// CNIPath (colon-separated directories), CNIConfigDir and the
	// BridgeNetwork* keys configure bridge and cni network modes; ""
	// means the client's defaults.
	CNIPath                  string
	CNIConfigDir             string
	BridgeNetworkName        string
	BridgeNetworkSubnet      string
	BridgeNetworkHairpinMode bool
	// BridgeNetworkSubnetIPv6 is bridge_network_subnet_ipv6: an IPv6
	// CIDR the bridge network also gives allocs an address from; ""
	// means IPv4 only.
	BridgeNetworkSubnetIPv6 string

	// SimNodes, when above 0, replaces the client by that many simulated
	// nodes (nomadq only: sim_nodes, -sim-nodes), each with SimNodeCPU
	// MHz and SimNodeMemoryMB of memory (0: the simulator's defaults).
	SimNodes        int
	SimNodeCPU      int
	SimNodeMemoryMB int

	// IntroToken is the client introduction token the node sends on its
	// first registration. As in Nomad it is not an HCL key: it comes from
	// -client-intro-token, NOMAD_CLIENT_INTRO_TOKEN or the file
	// intro_token.jwt in the client's state directory. A secret, so it
	// never shows in /v1/agent/self.
	IntroToken string `json:"-"`
}

// Plugin is one plugin "<name>" { config { ... } } block.
type Plugin struct {
	Name   string
	Config map[string]any
}

// Telemetry is the telemetry block: how the agent's metrics are collected
// and served (agent/metrics.go, website/metrics.md).
type Telemetry struct {
	CollectionInterval         string
	CollectionIntervalDur      time.Duration `json:"-"`
	DisableHostname            bool
	UseNodeName                bool
	PrometheusMetrics          bool
	PublishAllocationMetrics   bool
	PublishNodeMetrics         bool
	PublishJobMetrics          bool
	StatsiteAddr               string
	StatsdAddr                 string
	DataDogAddr                string
	DataDogTags                []string
	FilterDefault              *bool
	PrefixFilter               []string
	InMemoryCollectionInterval string
	InMemoryRetentionPeriod    string
}

// UI is the ui block as the CLI reads it.
type UI struct {
	Enabled      bool
	ShowCLIHints bool
}

// Default returns Nomad's agent defaults: server and client off,
// bind 0.0.0.0, ports 4646-4648, region global, datacenter dc1.
func Default() *Config {
	host, _ := os.Hostname()
	if host == "" {
		host = "nomad"
	}
	return &Config{
		Name:           host,
		Region:         structs.DefaultRegion,
		Datacenter:     "dc1",
		BindAddr:       "0.0.0.0",
		LogLevel:       "INFO",
		Ports:          &Ports{HTTP: DefaultHTTPPort, RPC: DefaultRPCPort, Serf: DefaultSerfPort},
		Addresses:      &Addresses{},
		AdvertiseAddrs: &Addresses{},
		Server: &Server{
			RetryInterval:          30 * time.Second,
			JobMaxCount:            structs.JobDefaultMaxCount,
			JobMaxPriority:         structs.JobMaxPriority,
			JobDefaultPriority:     structs.JobDefaultPriority,
			DefaultSchedulerConfig: structs.DefaultSchedulerConfiguration(),
		},
		Client:         &Client{NodePool: structs.DefaultNodePool, Meta: map[string]string{}, Options: map[string]string{}, ChrootEnv: map[string]string{}},
		Telemetry:      &Telemetry{CollectionInterval: "1s", CollectionIntervalDur: time.Second},
		ACL:            DefaultACL(),
		TLS:            &tlsutil.Config{},
		UI:             &UI{},
		MaxRequestBody: DefaultMaxRequestBody,
		Limits:         DefaultLimits(),
	}
}

// Dev returns the configuration of `nomad agent -dev`: server and
// client in one process, in memory, on 127.0.0.1, raw_exec enabled.
func Dev() *Config {
	c := Default()
	c.DevMode = true
	c.EnableDebug = true
	c.BindAddr = "127.0.0.1"
	c.LogLevel = "DEBUG"
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	c.Client.Options["driver.raw_exec.enable"] = "true"
	c.Plugins = append(c.Plugins, &Plugin{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	c.Telemetry.PrometheusMetrics = true
	c.Telemetry.PublishAllocationMetrics = true
	c.Telemetry.PublishNodeMetrics = true
	return c
}

// RawExecEnabled reports whether the raw_exec driver is enabled, by its
// plugin block or by the legacy client option.
func (c *Config) RawExecEnabled() bool {
	enabled := false
	if v, ok := c.Client.Options["driver.raw_exec.enable"]; ok {
		enabled, _ = strconv.ParseBool(v)
	}
	for _, p := range c.Plugins {
		if p.Name != "raw_exec" {
			continue
		}
		if b, ok := p.Config["enabled"].(bool); ok {
			enabled = b
		}
	}
	return enabled
}

// Validate checks what the agent needs before it starts.
func (c *Config) Validate() error {
	var errs structs.MultiError
	if !c.Server.Enabled && !c.Client.Enabled {
		errs.Add(fmt.Errorf("must specify either server, client or dev mode for the agent"))
	}
	if !c.DevMode && c.DataDir == "" && (c.Server.Enabled || c.Client.Enabled) {
		errs.Add(fmt.Errorf("Must specify data_dir (or -data-dir) when not in dev mode"))
	}
	if net.ParseIP(c.BindAddr) == nil {
		errs.Add(fmt.Errorf("bind_addr %q is not an IP address", c.BindAddr))
	}
	for name, p := range map[string]int{"http": c.Ports.HTTP, "rpc": c.Ports.RPC, "serf": c.Ports.Serf} {
		if p < 0 || p > 65535 {
			errs.Add(fmt.Errorf("ports.%s %d is not allowed: must be between 0 and 65535", name, p))
		}
	}
	if c.Server.EncryptKey != "" {
		if _, err := structs.DecodeGossipKey(c.Server.EncryptKey); err != nil {
			errs.Add(fmt.Errorf("server.encrypt is not allowed: %w", err))
		}
	}
	if c.Server.BootstrapExpect < 0 {
		errs.Add(fmt.Errorf("server.bootstrap_expect %d is not allowed: must not be negative", c.Server.BootstrapExpect))
	}
	if c.Server.JobMaxCount < 0 {
		errs.Add(fmt.Errorf("server.job_max_count %d is not allowed: must be 0 (no limit) or more", c.Server.JobMaxCount))
	}
	c.Server.validatePriorities(&errs)
	if ci := c.Server.ClientIntroduction; ci != nil {
		if err := ci.Validate(); err != nil {
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				errs.Add(fmt.Errorf("server.%w", e))
			}
		}
	}
	if s := c.Server.DefaultSchedulerConfig; s != nil {
		if err := s.Validate(); err != nil {
			errs.Add(fmt.Errorf("server.default_scheduler_config: %w", err))
		}
	}
	// A bad pool would only fail at registration, after the agent started.
	if pool := c.Client.NodePool; c.Client.Enabled && pool != "" {
		if err := structs.ValidateNodePoolName(pool); err != nil {
			errs.Add(fmt.Errorf("client.node_pool: %w", err))
		} else if pool == structs.AllNodePools {
			errs.Add(fmt.Errorf("client.node_pool %q is not allowed: node is not allowed to register in node pool %q", pool, structs.AllNodePools))
		}
	}
	if c.Client.Enabled {
		c.Client.validate(&errs)
	} else if c.Client.SimNodes > 0 {
		errs.Add(fmt.Errorf("client.sim_nodes %d is not allowed: simulated nodes need client.enabled (or -client / -dev)", c.Client.SimNodes))
	}
	if err := c.TLS.Validate(); err != nil {
		errs.Add(err)
	}
	c.validateLimits(&errs)
	return errs.ErrorOrNil()
}

// JobPriorities returns the job_max_priority and job_default_priority
// the server applies: the configured values, 0 meaning Nomad's defaults.
func (s *Server) JobPriorities() (maxPriority, defaultPriority int) {
	maxPriority, defaultPriority = s.JobMaxPriority, s.JobDefaultPriority
	if maxPriority == 0 {
		maxPriority = structs.JobMaxPriority
	}
	if defaultPriority == 0 {
		defaultPriority = structs.JobDefaultPriority
	}
	return maxPriority, defaultPriority
}

// validatePriorities checks job_max_priority and job_default_priority
// against Nomad's bounds: the maximum from 100 to 32766, the default
// from 50 to below the maximum.
func (s *Server) validatePriorities(errs *structs.MultiError) {
	maxPriority, defaultPriority := s.JobPriorities()
	if maxPriority < structs.JobMaxPriority || maxPriority > structs.JobMaxPriorityLimit {
		errs.Add(fmt.Errorf("server.job_max_priority %d is not allowed: must be between %d and %d (0 means %d)",
			s.JobMaxPriority, structs.JobMaxPriority, structs.JobMaxPriorityLimit, structs.JobMaxPriority))
		return
	}
	if defaultPriority < structs.JobDefaultPriority || defaultPriority >= maxPriority {
		errs.Add(fmt.Errorf("server.job_default_priority %d is not allowed: must be between %d and %d, below job_max_priority %d (0 means %d)",
			s.JobDefaultPriority, structs.JobDefaultPriority, maxPriority-1, maxPriority, structs.JobDefaultPriority))
	}
}

func (c *Config) validateLimits(errs *structs.MultiError) {
	for key, n := range map[string]int64{
		"http_max_conns_per_client":            int64(c.Limits.HTTPMaxConnsPerClient),
		"rpc_max_conns_per_client":             int64(c.Limits.RPCMaxConnsPerClient),
		"http_max_request_bytes":               c.MaxRequestBody,
		"http_max_blocking_queries_per_client": int64(c.Limits.HTTPMaxBlockingQueriesPerClient),
		"http_max_log_streams_per_client":      int64(c.Limits.HTTPMaxLogStreamsPerClient),
	} {
		if n < 0 {
			errs.Add(fmt.Errorf("limits.%s %d is not allowed: must be 0 (no limit) or more", key, n))
		}
	}
	for key, d := range map[string]time.Duration{
		"https_handshake_timeout": c.Limits.HTTPSHandshakeTimeout,
		"rpc_handshake_timeout":   c.Limits.RPCHandshakeTimeout,
	} {
		if d < 0 {
			errs.Add(fmt.Errorf("limits.%s %q is not allowed: must be 0 (no timeout) or more", key, d))
		}
	}
}

func (c *Client) validate(errs *structs.MultiError) {
	for _, p := range []struct {
		key string
		v   int
	}{{"client.min_dynamic_port", c.MinDynamicPort}, {"client.max_dynamic_port", c.MaxDynamicPort}} {
		if p.v < 0 || p.v > structs.MaxPort {
			errs.Add(fmt.Errorf("%s %d is not allowed: must be between 1 and %d", p.key, p.v, structs.MaxPort))
		}
	}
	for _, p := range []struct {
		key string
		v   int
	}{{"client.sim_nodes", c.SimNodes}, {"client.sim_node_cpu", c.SimNodeCPU}, {"client.sim_node_memory_mb", c.SimNodeMemoryMB}} {
		if p.v < 0 {
			errs.Add(fmt.Errorf("%s %d is not allowed: must be 0 or more", p.key, p.v))
		}
	}
	if c.SimNodes == 0 && (c.SimNodeCPU != 0 || c.SimNodeMemoryMB != 0) {
		errs.Add(fmt.Errorf("client.sim_node_cpu and client.sim_node_memory_mb need client.sim_nodes: they size simulated nodes only"))
	}
	lo, hi := c.MinDynamicPort, c.MaxDynamicPort
	if lo == 0 {
		lo = 20000
	}
	if hi == 0 {
		hi = 32000
	}
	if lo > hi {
		errs.Add(fmt.Errorf("client.min_dynamic_port %d is not allowed: must not be above max_dynamic_port %d", lo, hi))
	}
	seen := make(map[string]bool)
	for _, v := range c.HostVolumes {
		switch {
		case seen[v.Name]:
			errs.Add(fmt.Errorf("client.host_volume %q is defined more than once", v.Name))
		case v.Path == "":
			errs.Add(fmt.Errorf("client.host_volume %q path must be set", v.Name))
		case !filepath.IsAbs(v.Path):
			errs.Add(fmt.Errorf("client.host_volume %q path %q is not allowed: must be absolute", v.Name, v.Path))
		}
		seen[v.Name] = true
	}
}
