package client

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadq/nomadq/client/allocrunner"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/network"
	"github.com/nomadq/nomadq/structs"
)

// Config configures a client. Zero values take the defaults listed.
type Config struct {
	// DataDir is required; state lives in <DataDir>/client/state.db.
	DataDir string
	// AllocDir holds alloc dirs; default <DataDir>/alloc.
	AllocDir string
	// StateDir holds the state DB; default <DataDir>/client.
	StateDir string
	// EphemeralState says the state goes away with the process (a dev
	// agent's temp dir): it is kept in memory, as nothing could read a
	// file back after the process ends.
	EphemeralState bool

	// IntroToken is the client introduction token (a JWT a server
	// minted) sent on registration; "" means the file intro_token.jwt in
	// StateDir when it exists, else none.
	IntroToken string

	// NodeName defaults to the hostname.
	NodeName string
	// Datacenter defaults to "dc1".
	Datacenter string
	// NodePool defaults to "default".
	NodePool  string
	NodeClass string
	Meta      map[string]string
	// Region defaults to "global".
	Region string
	// HTTPAddr is the agent's advertised HTTP address.
	HTTPAddr string
	// HTTPTLS says the agent's HTTP API is HTTPS (tls.http).
	HTTPTLS bool
	// Reserved is kept away from allocations.
	Reserved Reserved

	// Options are Nomad's client options, e.g. "driver.raw_exec.enable"
	// = "1" or "driver.mock_driver.enable" = "true".
	Options map[string]string
	// ChrootEnv maps host paths to their place in exec tasks' chroots;
	// empty means the exec driver's defaults.
	ChrootEnv map[string]string
	// DevMode enables mock_driver, and raw_exec unless the
	// driver.raw_exec.enable option says otherwise, as a -dev agent does.
	DevMode bool

	// NetworkInterface names the interface whose first address the
	// node's tasks are reached at; "" means AdvertiseIP.
	NetworkInterface string
	// AdvertiseIP is the address the agent advertises; tasks are reached
	// there when NetworkInterface is empty ("" means 127.0.0.1).
	AdvertiseIP string
	// MinDynamicPort and MaxDynamicPort bound dynamic host ports; 0
	// means 20000 and 32000.
	MinDynamicPort int
	MaxDynamicPort int
	// HostVolumes are directories jobs may mount, by name.
	HostVolumes []*structs.ClientHostVolumeConfig

	// CNIPath lists the directories searched for CNI plugins (cni_path);
	// empty means DefaultCNIPath. CNIConfigDir holds the operator's
	// networks for "cni/<name>" modes; "" means /opt/cni/config.
	CNIPath      []string
	CNIConfigDir string
	// BridgeNetworkName, BridgeNetworkSubnet and BridgeNetworkHairpinMode
	// shape the bridge network mode; "" means "nomad" and
	// 172.26.64.0/20.
	BridgeNetworkName        string
	BridgeNetworkSubnet      string
	BridgeNetworkHairpinMode bool
	// BridgeNetworkSubnetIPv6 adds an IPv6 range to the bridge network;
	// "" means IPv4 only.
	BridgeNetworkSubnetIPv6 string

	// Servers are server RPC addresses ("host:4647"), used in turn.
	Servers []string
	// RPCTLS, when set (tls.rpc), makes connections to Servers mutual
	// TLS.
	RPCTLS *tls.Config
	// RPC, when set, is used instead of Servers (InProcessRPC for an
	// agent that runs a server too).
	RPC RPC

	Logger hclog.Logger
	// Version is reported as the node's nomad.version.
	Version string

	// DockerPluginConfig is the agent's plugin "docker" { config { ... } }
	// block as decoded (docker.ParsePluginConfig reads it); nil means
	// Nomad's defaults: the engine at DOCKER_HOST or the default socket.
	DockerPluginConfig map[string]any

	// Drivers, when set, replaces the built-in drivers (tests).
	Drivers map[string]drivers.Driver
	// ExtraAllocHooks are added to every alloc runner (tests).
	ExtraAllocHooks []allocrunner.HookFactory

	// Metrics receives the gauges the client refreshes every
	// MetricsInterval (the agent's own go-metrics handle); nil means the
	// process-global one.
	Metrics *metrics.Metrics
	// MetricsInterval is the telemetry collection interval; default 1 s.
	MetricsInterval time.Duration

	// DriverHealthInterval is how often the drivers are fingerprinted
	// again; default 30 s, Nomad's period.
	DriverHealthInterval time.Duration

	// SyncInterval bounds how long a non-terminal alloc update waits to
	// be batched; default 200 ms.
	SyncInterval time.Duration
	// RetryInterval is the wait after a failed RPC; default 1 s.
	RetryInterval time.Duration
	// RPCTimeout bounds dialing a server; default 5 s.
	RPCTimeout time.Duration
}

// Reserved is what the operator keeps away from allocations, in MHz and
// MB.
type Reserved struct {
	CPU      int64
	MemoryMB int64
	DiskMB   int64
}

// DefaultCNIPath is where the client looks for CNI plugins: Nomad's
// /opt/cni/bin, then /usr/lib/cni, where Debian's containernetworking-plugins
// puts them.
var DefaultCNIPath = []string{"/opt/cni/bin", "/usr/lib/cni"}

// DefaultCNIConfigDir is Nomad's cni_config_dir.
const DefaultCNIConfigDir = "/opt/cni/config"

// Version is the default nomad.version of nodes.
const Version = "0.1.0-dev"

func (c *Config) setDefaults() error {
	if c.DataDir == "" {
		return errors.New("client: data_dir is required")
	}
	if c.AllocDir == "" {
		c.AllocDir = filepath.Join(c.DataDir, "alloc")
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(c.DataDir, "client")
	}
	if c.NodeName == "" {
		c.NodeName, _ = os.Hostname()
	}
	if len(c.CNIPath) == 0 {
		c.CNIPath = DefaultCNIPath
	}
	if c.CNIConfigDir == "" {
		c.CNIConfigDir = DefaultCNIConfigDir
	}
	if c.BridgeNetworkName == "" {
		c.BridgeNetworkName = network.DefaultBridgeName
	}
	if c.BridgeNetworkSubnet == "" {
		c.BridgeNetworkSubnet = network.DefaultBridgeSubnet
	}
	if err := (network.BridgeConfig{Name: c.BridgeNetworkName, Subnet: c.BridgeNetworkSubnet, SubnetIPv6: c.BridgeNetworkSubnetIPv6}).Validate(); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if c.Datacenter == "" {
		c.Datacenter = "dc1"
	}
	if c.NodePool == "" {
		c.NodePool = structs.DefaultNodePool
	}
	if c.Region == "" {
		c.Region = structs.DefaultRegion
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Version == "" {
		c.Version = Version
	}
	if c.SyncInterval <= 0 {
		c.SyncInterval = 200 * time.Millisecond
	}
	if c.DriverHealthInterval <= 0 {
		c.DriverHealthInterval = defaultDriverHealthInterval
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = time.Second
	}
	if c.RPCTimeout <= 0 {
		c.RPCTimeout = 5 * time.Second
	}
	if c.RPC == nil && len(c.Servers) == 0 {
		return errors.New("client: no servers configured")
	}
	return nil
}

// optionBool reads a boolean client option.
// rawExecEnabled is the driver.raw_exec.enable option when set (the agent
// always sets it, so an operator's enabled = false holds even in -dev),
// else DevMode.
func (c *Config) rawExecEnabled() bool {
	if _, ok := c.Options["driver.raw_exec.enable"]; ok {
		return c.optionBool("driver.raw_exec.enable")
	}
	return c.DevMode
}

func (c *Config) optionBool(key string) bool {
	v, ok := c.Options[key]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err == nil && b
}
