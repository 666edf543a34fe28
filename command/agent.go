package command

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/agent"
	"github.com/nomadq/nomadq/agent/config"
)

const agentUsage = `
Usage: nomad agent [options]

  Starts the nomadq agent and runs until an interrupt is received. The
  agent may be a client and/or server. -dev runs both in memory on
  127.0.0.1 with raw_exec and mock_driver enabled.

  SIGINT and SIGTERM shut the agent down gracefully; SIGHUP reloads the
  log level and the TLS CA, certificate and key from the configuration
  files.
`

// agentSignals receives the signals the agent command handles; tests
// replace it to send signals without a process.
var agentSignals = func(ch chan<- os.Signal) func() {
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	return func() { signal.Stop(ch) }
}

func runAgent(args []string, s Streams) int {
	var (
		configs   stringList
		dev       bool
		bind      string
		httpPort  int
		rpcPort   int
		serfPort  int
		dataDir   string
		logLevel  string
		logJSON   boolFlag
		name      string
		region    string
		dc        string
		server    boolFlag
		client    boolFlag
		bootstrap int
		join      stringList
		servers   stringList
		encrypt   string
		simNodes  int
		// introToken is -client-intro-token; NOMAD_CLIENT_INTRO_TOKEN
		// overrides it, as in Nomad.
		introToken string
	)
	fs := newFlagSet("agent", s.Stderr, agentUsage)
	fs.Var(&configs, "config", "A config file or directory to load (repeatable; later ones override)")
	fs.BoolVar(&dev, "dev", false, "Start in development mode: server and client in memory on 127.0.0.1")
	fs.StringVar(&bind, "bind", "", "The address the agent's listeners bind to")
	fs.IntVar(&httpPort, "http-port", -1, "The HTTP API port (0 picks a free port)")
	fs.IntVar(&rpcPort, "rpc-port", -1, "The RPC port (0 picks a free port)")
	fs.IntVar(&serfPort, "serf-port", -1, "The serf port (0 picks a free port)")
	fs.StringVar(&dataDir, "data-dir", "", "The data directory")
	fs.StringVar(&logLevel, "log-level", "", "The log level: TRACE, DEBUG, INFO, WARN or ERROR")
	fs.Var(&logJSON, "log-json", "Log in JSON")
	fs.StringVar(&name, "node", "", "The agent's name")
	fs.StringVar(&region, "region", "", "The agent's region")
	fs.StringVar(&dc, "dc", "", "The agent's datacenter")
	fs.Var(&server, "server", "Enable server mode")
	fs.Var(&client, "client", "Enable client mode")
	fs.IntVar(&bootstrap, "bootstrap-expect", 0, "How many servers to wait for before bootstrapping")
	fs.Var(&join, "retry-join", "A server's serf address to join (repeatable)")
	fs.Var(&servers, "servers", "A server's RPC address for the client (repeatable)")
	fs.StringVar(&encrypt, "encrypt", "", "The servers' gossip encryption key (base64; see nomad operator gossip keyring generate)")
	fs.StringVar(&introToken, "client-intro-token", "", "The client introduction token sent on the node's first registration (NOMAD_CLIENT_INTRO_TOKEN overrides it)")
	fs.IntVar(&simNodes, "sim-nodes", 0, "Run this many simulated nodes (mock_driver only) instead of the client (nomadq only; see client.sim_nodes)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(s.Stderr, "Unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 1
	}

	cfg := config.Default()
	if dev {
		cfg = config.Dev()
	}
	var warnings []string
	if err := config.Load(cfg, configs, func(w string) { warnings = append(warnings, w) }); err != nil {
		fmt.Fprintf(s.Stderr, "Error loading configuration: %s\n", err)
		return 1
	}
	if bind != "" {
		cfg.BindAddr = bind
	}
	for _, p := range []struct {
		v    int
		into *int
	}{{httpPort, &cfg.Ports.HTTP}, {rpcPort, &cfg.Ports.RPC}, {serfPort, &cfg.Ports.Serf}} {
		if p.v >= 0 {
			*p.into = p.v
		}
	}
	if dataDir != "" {
		cfg.DataDir = dataDir
	}
	if logLevel != "" {
		cfg.LogLevel = logLevel
	}
	if logJSON.set {
		cfg.LogJSON = logJSON.value
	}
	if name != "" {
		cfg.Name = name
	}
	if region != "" {
		cfg.Region = region
	}
	if dc != "" {
		cfg.Datacenter = dc
	}
	if server.set {
		cfg.Server.Enabled = server.value
	}
	if client.set {
		cfg.Client.Enabled = client.value
	}
	if bootstrap > 0 {
		cfg.Server.BootstrapExpect = bootstrap
	}
	if len(join) > 0 {
		cfg.Server.RetryJoin = join
	}
	if len(servers) > 0 {
		cfg.Client.Servers = servers
	}
	if encrypt != "" {
		cfg.Server.EncryptKey = encrypt
	}
	if introToken != "" {
		cfg.Client.IntroToken = introToken
	}
	if tok, ok := os.LookupEnv("NOMAD_CLIENT_INTRO_TOKEN"); ok {
		cfg.Client.IntroToken = tok
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "sim-nodes" {
			cfg.Client.SimNodes = simNodes
		}
	})

	// One agent per process: its in-memory sink is the global one, so the
	// metrics other packages emit show up on /v1/metrics.
	a, err := agent.New(cfg, s.Stderr)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error starting agent: %s\n", err)
		return 1
	}
	_, _ = metrics.NewGlobal(a.GlobalMetricsConfig(), a.MetricsSink())

	fmt.Fprintln(s.Stdout, "==> nomadq agent configuration:")
	fmt.Fprintln(s.Stdout)
	fmt.Fprintf(s.Stdout, "       Advertise Addrs: HTTP: %s; RPC: %s; Serf: %s\n", strings.TrimPrefix(a.HTTPAddr(), "http://"), a.RPCAddr(), a.SerfAddr())
	fmt.Fprintf(s.Stdout, "            Bind Addrs: %s\n", cfg.BindAddr)
	fmt.Fprintf(s.Stdout, "                Client: %v\n", cfg.Client.Enabled)
	fmt.Fprintf(s.Stdout, "             Log Level: %s\n", cfg.LogLevel)
	fmt.Fprintf(s.Stdout, "                Region: %s (DC: %s)\n", cfg.Region, cfg.Datacenter)
	fmt.Fprintf(s.Stdout, "                Server: %v\n", cfg.Server.Enabled)
	fmt.Fprintf(s.Stdout, "               Version: %s\n", Version)
	fmt.Fprintln(s.Stdout)
	fmt.Fprintf(s.Stdout, "==> HTTP API listening on %s\n", a.HTTPAddr())
	if a.RPCAddr() != "" {
		fmt.Fprintf(s.Stdout, "==> RPC listening on %s\n", a.RPCAddr())
	}
	fmt.Fprintln(s.Stdout, "==> nomadq agent started! Log data will stream in below:")
	for _, w := range warnings {
		fmt.Fprintf(s.Stderr, "    [WARN] %s\n", w)
	}

	sigCh := make(chan os.Signal, 4)
	stop := agentSignals(sigCh)
	defer stop()
	for {
		var sig os.Signal
		select {
		case sig = <-sigCh:
		case <-a.Fatal():
			fmt.Fprintf(s.Stderr, "==> Error: %s\n==> Shutting down agent...\n", a.FatalErr())
			_ = a.Shutdown()
			return 1
		}
		if sig == syscall.SIGHUP {
			reloaded := config.Default()
			if dev {
				reloaded = config.Dev()
			}
			if err := config.Load(reloaded, configs, nil); err != nil {
				fmt.Fprintf(s.Stderr, "==> Error reloading configuration: %s\n", err)
				continue
			}
			level := reloaded.LogLevel
			if logLevel != "" {
				level = logLevel
			}
			if err := a.SetLogLevel(level); err != nil {
				fmt.Fprintf(s.Stderr, "==> Error reloading log level: %s\n", err)
				continue
			}
			fmt.Fprintf(s.Stdout, "==> Reloaded: log level is %s\n", strings.ToUpper(level))
			if err := a.ReloadTLS(reloaded.TLS); err != nil {
				fmt.Fprintf(s.Stderr, "==> Error reloading TLS: %s\n", err)
			} else if reloaded.TLS.Enabled() {
				fmt.Fprintln(s.Stdout, "==> Reloaded: TLS certificates")
			}
			continue
		}
		fmt.Fprintf(s.Stdout, "==> Caught signal: %v\n==> Gracefully shutting down agent...\n", sig)
		done := make(chan error, 1)
		go func() { done <- a.Shutdown() }()
		select {
		case err := <-done:
			if err != nil {
				fmt.Fprintf(s.Stderr, "==> Error shutting down: %s\n", err)
				return 1
			}
		case <-time.After(30 * time.Second):
			fmt.Fprintln(s.Stderr, "==> Shutdown timed out")
			return 1
		case <-sigCh:
			fmt.Fprintln(s.Stderr, "==> Second signal received, exiting now")
			return 1
		}
		fmt.Fprintln(s.Stdout, "==> Shutdown complete")
		return 0
	}
}
