package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/structs"
	"github.com/nomadq/nomadq/tlsutil"
)

// Agent is a running nomadq agent: a server, a client or both, and the
// HTTP API in front of them.
type Agent struct {
	config    *config.Config
	logger    hclog.InterceptLogger
	logOutput io.Writer

	server *nomad.Server

	// aclResolver caches token resolutions on agents without a server.
	aclResolver aclResolver
	client      NodeClient

	// telemetry holds the agent's own metrics sinks and Prometheus
	// registry (agent/metrics.go).
	telemetry *telemetry

	httpListener net.Listener
	httpServer   *http.Server
	httpAddr     string

	// tls is the loaded tls block; nil when TLS is off.
	tls *tlsutil.Set
	// forwardRT carries requests forwarded to other nodes over HTTPS.
	forwardOnce sync.Once
	forwardRT   http.RoundTripper

	shutdownOnce sync.Once
	shutDown     atomic.Bool
	shutdownErr  error
}

// RPCer calls server RPC endpoints; the in-process server and the
// client's connection to the servers both are.
type RPCer interface {
	RPC(method string, args, reply any) error
}

// New starts an agent from cfg, logging to logOutput (os.Stderr when nil):
// the server when server.enabled, the client when client.enabled, and the
// HTTP API. It returns when everything listens.
func New(cfg *config.Config, logOutput io.Writer) (*Agent, error) {
	if logOutput == nil {
		logOutput = os.Stderr
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	level := hclog.LevelFromString(cfg.LogLevel)
	if level == hclog.NoLevel {
		return nil, fmt.Errorf("invalid log level %q: must be one of TRACE, DEBUG, INFO, WARN, ERROR", cfg.LogLevel)
	}
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:       "agent",
		Level:      level,
		Output:     logOutput,
		JSONFormat: cfg.LogJSON,
	})
	a := &Agent{
		config:    cfg,
		logger:    logger,
		logOutput: logOutput,
	}
	tel, err := newTelemetry(cfg.Telemetry)
	if err != nil {
		return nil, err
	}
	a.telemetry = tel
	if cfg.TLS.Enabled() {
		if a.tls, err = tlsutil.Load(cfg.TLS, cfg.Region); err != nil {
			return nil, err
		}
	}
	if cfg.Server.Enabled {
		if err := a.setupServer(); err != nil {
			return nil, err
		}
	}
	if err := a.setupHTTP(); err != nil {
		a.Shutdown()
		return nil, err
	}
	if cfg.Client.Enabled {
		if err := a.setupClient(); err != nil {
			a.Shutdown()
			return nil, err
		}
	}
	a.registerCollectors(a.telemetry.registry)
	return a, nil
}

func (a *Agent) serverConfig() (*nomad.Config, error) {
	cfg := a.config
	sc := nomad.DefaultConfig()
	sc.NodeName = cfg.Name
	sc.ACLEnabled = cfg.ACL.Enabled
	sc.ACLTokenMinExpirationTTL = cfg.ACL.TokenMinExpirationTTL
	sc.ACLTokenMaxExpirationTTL = cfg.ACL.TokenMaxExpirationTTL
	sc.Region = cfg.Region
	if ci := cfg.Server.ClientIntroduction; ci != nil {
		if err := ci.Validate(); err != nil {
			return nil, err
		}
		sc.NodeIntroduction = ci
	}
	sc.Datacenter = cfg.Datacenter
	sc.DevMode = cfg.DevMode
	sc.DataDir = cfg.DataDir
	sc.Logger = a.logger
	sc.LogOutput = a.logOutput
	sc.Metrics = a.telemetry.metrics
	sc.RPCHandshakeTimeout = cfg.Limits.RPCHandshakeTimeout
	sc.RPCMaxConnsPerClient = cfg.Limits.RPCMaxConnsPerClient
	if cfg.TLS.EnableRPC {
		sc.TLS = a.tls
	}

	rpcAddr, err := net.ResolveTCPAddr("tcp", bindAddr(cfg, cfg.Addresses.RPC, cfg.Ports.RPC))
	if err != nil {
		return nil, fmt.Errorf("invalid RPC address: %w", err)
	}
	sc.RPCAddr = rpcAddr
	if adv := cfg.AdvertiseAddrs.RPC; adv != "" {
		addr, err := parseAdvertise(adv, cfg.Ports.RPC)
		if err != nil {
			return nil, fmt.Errorf("invalid advertise.rpc: %w", err)
		}
		sc.RPCAdvertise = addr
	}
	sc.SerfBindAddr = cfg.BindAddr
	if cfg.Addresses.Serf != "" {
		sc.SerfBindAddr = cfg.Addresses.Serf
	}
	sc.SerfPort = cfg.Ports.Serf
	if adv := cfg.AdvertiseAddrs.Serf; adv != "" {
		host, _, err := net.SplitHostPort(adv)
		if err != nil {
			host = adv
		}
		sc.SerfAdvertiseAddr = host
	}
	if sc.SerfBindAddr == "0.0.0.0" && sc.SerfAdvertiseAddr == "" {
		sc.SerfAdvertiseAddr = "127.0.0.1"
	}
	if cfg.Server.EncryptKey != "" {
		key, err := structs.DecodeGossipKey(cfg.Server.EncryptKey)
		if err != nil {
			return nil, fmt.Errorf("server.encrypt is not allowed: %w", err)
		}
		sc.EncryptKey = key
	}
	sc.BootstrapExpect = cfg.Server.BootstrapExpect
	if cfg.DevMode {
		sc.BootstrapExpect = 1
	}
	sc.RetryJoin = cfg.Server.RetryJoin
	if cfg.Server.RetryInterval > 0 {
		sc.RetryInterval = cfg.Server.RetryInterval
	}
	sc.RetryMax = cfg.Server.RetryMax
	if cfg.Server.NumSchedulers > 0 {
		sc.NumSchedulers = cfg.Server.NumSchedulers
	}
	if cfg.Server.EventBufferSize < 0 {
		return nil, fmt.Errorf("server.event_buffer_size = %d: must be 0 (the default, 100) or more", cfg.Server.EventBufferSize)
	}
	sc.DisableEventBroker = cfg.Server.DisableEventBroker
	sc.EventBufferSize = cfg.Server.EventBufferSize
	sc.JobMaxCount = cfg.Server.JobMaxCount
	sc.JobMaxPriority, sc.JobDefaultPriority = cfg.Server.JobPriorities()
	applyServerTuning(sc, cfg.Server)
	if cfg.Server.DefaultSchedulerConfig != nil {
		c := *cfg.Server.DefaultSchedulerConfig
		c.BatchQueue.Canonicalize()
		sc.DefaultSchedulerConfig = &c
	}
	return sc, nil
}

// bindAddr returns the address a listener binds: its addresses override,
// or bind_addr.
func bindAddr(cfg *config.Config, override string, port int) string {
	host := cfg.BindAddr
	if override != "" {
		host = override
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// parseAdvertise accepts "host" or "host:port"; the port defaults to port.
func parseAdvertise(s string, port int) (*net.TCPAddr, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		host, p = s, strconv.Itoa(port)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, fmt.Errorf("%q is not an IP address", host)
	}
	pn, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("%q is not a port", p)
	}
	return &net.TCPAddr{IP: ip, Port: pn}, nil
}

func (a *Agent) setupServer() error {
	sc, err := a.serverConfig()
	if err != nil {
		return err
	}
	srv, err := nomad.NewServer(sc)
	if err != nil {
		return fmt.Errorf("error starting server: %w", err)
	}
	a.server = srv
	a.logger.Info("server started", "rpc", srv.RPCAddr().String(), "serf", srv.SerfAddr())
	return nil
}

func (a *Agent) setupClient() error {
	var rpc RPCer
	if a.server != nil {
		rpc = a.server
	}
	var servers []string
	servers = append(servers, a.config.Client.Servers...)
	if a.server != nil {
		servers = append(servers, a.server.RPCAddr().String())
	}
	dataDir := ""
	if a.config.DataDir != "" {
		dataDir = filepath.Join(a.config.DataDir, "client")
	}
	c, err := newNodeClient(a, rpc, servers, dataDir)
	if err != nil {
		return fmt.Errorf("error starting client: %w", err)
	}
	a.client = c
	return nil
}

func (a *Agent) setupHTTP() error {
	addr := bindAddr(a.config, a.config.Addresses.HTTP, a.config.Ports.HTTP)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("error starting HTTP listener on %s: %w", addr, err)
	}
	a.httpListener = l
	a.httpAddr = a.httpScheme() + "://" + l.Addr().String()
	h := newHTTPHandler(a)
	a.httpServer = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: a.logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	if n := a.config.Limits.HTTPMaxConnsPerClient; n > 0 {
		a.httpServer.ConnState = httpConnLimit(n, a.logger)
	}
	serve := func() error { return a.httpServer.Serve(l) }
	if a.config.TLS.EnableHTTP {
		// net/http bounds a TLS handshake by the shortest of its
		// timeouts, here the header read's (limits.https_handshake_timeout).
		if d := a.config.Limits.HTTPSHandshakeTimeout; d > 0 && d < a.httpServer.ReadHeaderTimeout {
			a.httpServer.ReadHeaderTimeout = d
		}
		// HTTPS only: a plain request gets Go's 400 "Client sent an
		// HTTP request to an HTTPS server" and nothing else.
		a.httpServer.TLSConfig = a.tls.IncomingHTTP()
		serve = func() error { return a.httpServer.ServeTLS(l, "", "") }
	}
	go func() {
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("HTTP server stopped", "error", err)
		}
	}()
	return nil
}

// httpScheme is how the HTTP API is reached: https with tls.http.
func (a *Agent) httpScheme() string {
	if a.config.TLS.EnableHTTP {
		return "https"
	}
	return "http"
}

// HTTPAddr is the HTTP API's URL, e.g. "http://127.0.0.1:4646", with the
// port actually bound.
func (a *Agent) HTTPAddr() string { return a.httpAddr }

// RPCAddr is the server's RPC address ("" without a server).
func (a *Agent) RPCAddr() string {
	if a.server == nil {
		return ""
	}
	return a.server.RPCAddr().String()
}

// SerfAddr is the server's serf address ("" without a server).
func (a *Agent) SerfAddr() string {
	if a.server == nil {
		return ""
	}
	return a.server.SerfAddr()
}

// Server returns the agent's server, nil for a client-only agent.
func (a *Agent) Server() *nomad.Server { return a.server }

// Client returns the agent's node client, nil when it runs none.
func (a *Agent) Client() NodeClient { return a.client }

// Config returns the agent's configuration.
func (a *Agent) Config() *config.Config { return a.config }

// SetLogLevel changes the log level (SIGHUP reload).
func (a *Agent) SetLogLevel(level string) error {
	l := hclog.LevelFromString(level)
	if l == hclog.NoLevel {
		return fmt.Errorf("invalid log level %q", level)
	}
	a.logger.SetLevel(l)
	a.config.LogLevel = strings.ToUpper(level)
	return nil
}

// rpc calls the server: the in-process one, or through the client.
func (a *Agent) rpc(method string, args, reply any) error {
	if a.server != nil {
		return a.server.RPC(method, args, reply)
	}
	if r, ok := a.client.(RPCer); ok && a.client != nil {
		return r.RPC(method, args, reply)
	}
	return errors.New("no servers: this agent runs no server and its client cannot reach one")
}

// ReloadTLS rolls the agent's CA, certificate and key to the files c
// (the reloaded tls block) names, for every handshake from now on
// (SIGHUP). Turning TLS on or off, or changing another key of the block,
// needs a restart; ReloadTLS says so.
func (a *Agent) ReloadTLS(c *tlsutil.Config) error {
	switch {
	case a.tls == nil && c.Enabled():
		return errors.New("tls.http or tls.rpc turned on: restart the agent to apply it")
	case a.tls == nil:
		return nil
	}
	return a.tls.Reload(c)
}

// Shutdown stops the HTTP API, the client and the server, in that order.
func (a *Agent) Shutdown() error {
	a.shutdownOnce.Do(func() {
		a.shutDown.Store(true)
		var errs structs.MultiError
		if a.httpServer != nil {
			_ = a.httpServer.Close()
		}
		if a.client != nil {
			errs.Add(a.client.Shutdown())
		}
		if a.server != nil {
			errs.Add(a.server.Shutdown())
		}
		a.shutdownErr = errs.ErrorOrNil()
	})
	return a.shutdownErr
}

// Fatal is closed when the agent's server stopped on its own, as it does
// at a committed Raft entry it cannot decode; FatalErr says why. The
// agent's HTTP API and client still run: the caller shuts them down and
// exits non-zero. A nil channel (never ready) on an agent without a
// server.
func (a *Agent) Fatal() <-chan struct{} {
	if a.server == nil {
		return nil
	}
	return a.server.Fatal()
}

// FatalErr returns why the agent's server stopped on its own, or nil.
func (a *Agent) FatalErr() error {
	if a.server == nil {
		return nil
	}
	return a.server.FatalErr()
}

// ShutdownKillingTasks stops the agent like Shutdown, but first kills
// every task its client runs, as a dev agent always does. Tests use it so
// that an agent on a data dir leaves no task running behind it.
func (a *Agent) ShutdownKillingTasks() error {
	// An agent already shut down left its tasks to the next agent on its
	// data dir (a restart test); that agent kills them.
	if d, ok := a.client.(interface{ Destroy() }); ok && a.client != nil && !a.shutDown.Load() {
		d.Destroy()
	}
	return a.Shutdown()
}

// MetricsSink is where the agent's metrics go: its in-memory sink, which
// /v1/metrics displays, and its Prometheus registry. `nomad agent` makes
// it the process-global sink so libraries' metrics (Raft's) land here too.
func (a *Agent) MetricsSink() metrics.MetricSink { return a.telemetry.sink }

// GlobalMetricsConfig is the go-metrics configuration for the
// process-global handle of `nomad agent`: the telemetry block's, with
// runtime metrics every collection_interval.
func (a *Agent) GlobalMetricsConfig() *metrics.Config { return a.telemetry.metricsConfig(true) }
