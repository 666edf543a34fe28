package command

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

const operatorDebugUsage = `
Usage: nomad operator debug [options]

  Builds a debug bundle of the cluster, in Nomad's layout: the cluster's
  state (cluster/: agent self, members, leader, namespaces, regions, nodes),
  snapshots taken every -interval for -duration (interval/NNNN/: jobs,
  allocations, evaluations, nodes, metrics, raft, autopilot health and
  scheduler configuration), and per agent (server/<name>/, client/<id>/):
  its host data, pprof profiles every -pprof-interval (CPU profile,
  goroutines, heap, trace, threadcreate; the agent needs enable_debug or,
  with ACLs, a token with agent:write) and its logs for the whole duration.

  nomadq answers debug requests (pprof, logs, host data) for the agent
  asked only, so the per-agent data is that of the agent the command talks
  to: -server-id and -node-id may name it (or "all", meaning it), and
  naming another agent is refused. Run the command against each agent of
  interest.

  Without -output, the bundle is a nomad-debug-<time>.tar.gz archive in the
  current directory. Ctrl-C ends the capture early and still writes it.

Debug Options:

  -duration=<duration>        How long to capture (default 5m).
  -interval=<duration>        How often to take the cluster snapshots
                              (default 30s).
  -pprof-duration=<duration>  How long each CPU profile and trace runs
                              (default 1s).
  -pprof-interval=<duration>  How often to take profiles (default 30s).
  -log-level=<level>          The level of the captured logs (default TRACE).
  -log-include-location       Include file and line in the logs (default
                              true).
  -server-id=<name,...|all>   The servers to capture: this agent's server
                              (by name, or "leader" when it leads), or
                              "all" (default). "" captures none.
  -node-id=<id,...|all>       The clients to capture: this agent's node (by
                              ID or prefix), or "all" (default). "" none.
  -node-class=<class>         Only capture the node when it is of this
                              class.
  -max-nodes=<n>              The most clients to capture (default 10).
  -event-topic=<topic:filter> Also capture the event stream of these topics
                              (comma separated, "Job:*"; default none).
  -event-index=<index>        The index the event stream starts from.
  -stale                      Let any server answer the cluster queries.
  -output=<dir>               Write the bundle directory here instead of an
                              archive.
  -verbose                    Report each step.
`

// Nomad's debug bundle directories.
const (
	debugClusterDir  = "cluster"
	debugClientDir   = "client"
	debugServerDir   = "server"
	debugIntervalDir = "interval"
)

// debugCapture carries one nomad operator debug run.
type debugCapture struct {
	client  *api.Client
	dir     string
	out     io.Writer
	errw    io.Writer
	verbose bool
	stale   bool

	duration, interval, pprofDuration, pprofInterval time.Duration
	logLevel                                         string
	logLocation                                      bool

	servers []string // member names
	nodes   []string // node IDs

	mu       sync.Mutex
	manifest []string
}

func runOperatorDebug(args []string, s Streams) int {
	var (
		af                                               apiFlags
		duration, interval, pprofDuration, pprofInterval string
		logLevel, serverIDs, nodeIDs, nodeClass, output  string
		eventTopic, logLookback                          string
		logLocation, stale, verbose, logFileExport       bool
		maxNodes                                         int
		eventIndex                                       int64
	)
	fs := newFlagSet("operator debug", s.Stderr, operatorDebugUsage)
	af.register(fs)
	fs.StringVar(&duration, "duration", "5m", "How long to capture")
	fs.StringVar(&interval, "interval", "30s", "How often to take the cluster snapshots")
	fs.StringVar(&pprofDuration, "pprof-duration", "1s", "How long each CPU profile and trace runs")
	fs.StringVar(&pprofInterval, "pprof-interval", "30s", "How often to take profiles")
	fs.StringVar(&logLevel, "log-level", "TRACE", "The level of the captured logs")
	fs.BoolVar(&logLocation, "log-include-location", true, "Include file and line in the logs")
	fs.StringVar(&serverIDs, "server-id", "all", `The servers to capture ("all": this agent's)`)
	fs.StringVar(&nodeIDs, "node-id", "all", `The clients to capture ("all": this agent's)`)
	fs.StringVar(&nodeClass, "node-class", "", "Only capture the node when it is of this class")
	fs.IntVar(&maxNodes, "max-nodes", 10, "The most clients to capture")
	fs.StringVar(&eventTopic, "event-topic", "none", "Also capture the event stream of these topics")
	fs.Int64Var(&eventIndex, "event-index", 0, "The index the event stream starts from")
	fs.BoolVar(&stale, "stale", false, "Let any server answer the cluster queries")
	fs.StringVar(&output, "output", "", "Write the bundle directory here instead of an archive")
	fs.BoolVar(&verbose, "verbose", false, "Report each step")
	fs.StringVar(&logLookback, "log-lookback", "", "Not supported by nomadq (no log file export)")
	fs.BoolVar(&logFileExport, "log-file-export", false, "Not supported by nomadq (no log file export)")
	// Consul and Vault are not integrated in nomadq: their flags are
	// known so that they can be refused by name.
	refused := []string{
		"consul-http-addr", "consul-auth", "consul-token", "consul-token-file", "consul-client-cert",
		"consul-client-key", "consul-ca-cert", "consul-ca-path", "vault-address", "vault-token",
		"vault-ca-cert", "vault-ca-path", "vault-client-cert", "vault-client-key",
	}
	for _, name := range refused {
		fs.String(name, "", "Not supported by nomadq (no Consul or Vault integration)")
	}
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	for _, name := range append(refused, "log-lookback", "log-file-export") {
		if isSet(fs, name) {
			why := "nomadq has no Consul or Vault integration to capture"
			if !strings.HasPrefix(name, "consul") && !strings.HasPrefix(name, "vault") {
				why = "nomadq agents do not export their log files"
			}
			fmt.Fprintf(s.Stderr, "-%s is not supported: %s\n", name, why)
			return 1
		}
	}
	c := &debugCapture{client: client, out: s.Stdout, errw: s.Stderr, verbose: verbose, stale: stale,
		logLevel: strings.ToUpper(logLevel), logLocation: logLocation}
	for _, d := range []struct {
		name, value string
		into        *time.Duration
	}{
		{"duration", duration, &c.duration}, {"interval", interval, &c.interval},
		{"pprof-duration", pprofDuration, &c.pprofDuration}, {"pprof-interval", pprofInterval, &c.pprofInterval},
	} {
		v, err := time.ParseDuration(d.value)
		if err != nil || v <= 0 {
			fmt.Fprintf(s.Stderr, "Error parsing -%s: %q is not a positive duration (for example \"30s\")\n", d.name, d.value)
			return 1
		}
		*d.into = v
	}
	if c.interval > c.duration {
		fmt.Fprintln(s.Stderr, "Error parsing -interval: must be no longer than -duration")
		return 1
	}
	if c.pprofDuration > c.duration {
		fmt.Fprintln(s.Stderr, "Error parsing -pprof-duration: must be no longer than -duration")
		return 1
	}
	if hclog.LevelFromString(c.logLevel) == hclog.NoLevel {
		fmt.Fprintf(s.Stderr, "Invalid -log-level %q: use TRACE, DEBUG, INFO, WARN or ERROR\n", logLevel)
		return 1
	}
	if maxNodes < 0 {
		fmt.Fprintf(s.Stderr, "Invalid -max-nodes %d: must be 0 (no limit) or more\n", maxNodes)
		return 1
	}
	topics, err := parseEventTopics(eventTopic)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}

	self, err := client.Agent().Self()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying agent info: %s\n", err)
		return 1
	}
	if c.servers, err = c.pickServers(self, serverIDs); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if c.nodes, err = c.pickNodes(self, nodeIDs, nodeClass, maxNodes); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}

	stamped := "nomad-debug-" + time.Now().UTC().Format("2006-01-02-150405Z")
	if output != "" {
		c.dir = filepath.Join(output, stamped)
		if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintln(s.Stderr, "Output directory already exists")
			return 2
		}
	} else {
		tmp, err := os.MkdirTemp("", stamped)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error creating tmp directory: %s\n", err)
			return 2
		}
		defer os.RemoveAll(tmp)
		c.dir = filepath.Join(tmp, stamped)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		fmt.Fprintf(s.Stderr, "Error creating output directory: %s\n", err)
		return 2
	}
	flagValues := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "token" {
			flagValues[f.Name] = f.Value.String()
		}
	})
	c.writeJSON(debugClusterDir, "cli-flags.json", flagValues, nil)

	fmt.Fprintln(s.Stdout, "Starting debugger...")
	fmt.Fprintln(s.Stdout)
	fmt.Fprintf(s.Stdout, "Nomad CLI Version: %s\n", Version)
	fmt.Fprintf(s.Stdout, "           Region: %s\n", orDefault(af.region, orDefault(self.Member.Tags["region"], "global")))
	fmt.Fprintf(s.Stdout, "        Namespace: %s\n", orDefault(af.namespace, "default"))
	fmt.Fprintf(s.Stdout, "          Servers: (%d) %v\n", len(c.servers), c.servers)
	fmt.Fprintf(s.Stdout, "          Clients: (%d) %v\n", len(c.nodes), c.nodes)
	if nodeClass != "" {
		fmt.Fprintf(s.Stdout, "       Node Class: %s\n", nodeClass)
	}
	fmt.Fprintf(s.Stdout, "         Interval: %s\n", c.interval)
	fmt.Fprintf(s.Stdout, "         Duration: %s\n", c.duration)
	fmt.Fprintf(s.Stdout, "   pprof Interval: %s\n", c.pprofInterval)
	if c.pprofDuration != time.Second {
		fmt.Fprintf(s.Stdout, "   pprof Duration: %s\n", c.pprofDuration)
	}
	if topics != nil {
		fmt.Fprintf(s.Stdout, "     Event topics: %+v\n", topics)
	}
	fmt.Fprintln(s.Stdout)
	fmt.Fprintln(s.Stdout, "Capturing cluster data...")

	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	sigCh := make(chan os.Signal, 1)
	signal.Notify(sigCh, os.Interrupt)
	defer signal.Stop(sigCh)
	go func() {
		select {
		case <-sigCh:
			c.say("Caught interrupt: ending the capture early")
			cancel()
		case <-ctx.Done():
		}
	}()
	c.collect(ctx, self, topics, uint64(max(eventIndex, 0)))
	c.writeJSON("", "index.json", c.files(), nil)

	if output != "" {
		fmt.Fprintf(s.Stdout, "Created debug directory: %s\n", c.dir)
		return 0
	}
	archive := stamped + ".tar.gz"
	if err := tarGz(archive, filepath.Dir(c.dir), stamped); err != nil {
		fmt.Fprintf(s.Stderr, "Error creating archive: %s\n", err)
		return 2
	}
	fmt.Fprintf(s.Stdout, "Created debug archive: %s\n", archive)
	return 0
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// parseEventTopics reads -event-topic: "none", or Topic[:filter] items.
func parseEventTopics(v string) (map[api.Topic][]string, error) {
	if v == "" || v == "none" {
		return nil, nil
	}
	out := map[api.Topic][]string{}
	for _, item := range strings.Split(v, ",") {
		topic, filter, ok := strings.Cut(strings.TrimSpace(item), ":")
		if !ok {
			filter = "*"
		}
		if topic == "" {
			return nil, fmt.Errorf("Invalid -event-topic %q: each item is Topic or Topic:filter", v)
		}
		if topic == "all" {
			topic = "*"
		}
		out[api.Topic(topic)] = append(out[api.Topic(topic)], filter)
	}
	return out, nil
}

// pickServers resolves -server-id to the local server's member name.
func (c *debugCapture) pickServers(self *api.AgentSelf, ids string) ([]string, error) {
	if ids == "" {
		return nil, nil
	}
	local := ""
	if self.Member.Name != "" && self.Stats["nomad"]["server"] == "true" {
		local = self.Member.Name
	}
	var out []string
	for _, id := range strings.Split(ids, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "all" && local == "":
			c.say("Note: \"-server-id=all\" specified but the agent runs no server")
			continue
		case id == "all", id == local:
			id = local
		case id == "leader" && local != "":
			leader, err := c.client.Status().Leader()
			if err != nil {
				return nil, fmt.Errorf("Failed to retrieve leader; err: %v", err)
			}
			if !strings.HasPrefix(leader, self.Member.Addr+":") {
				return nil, fmt.Errorf("-server-id leader: this agent's server %q is not the leader (%s), and nomadq answers debug requests for the agent asked only: run the command against the leader", local, leader)
			}
			id = local
		default:
			return nil, fmt.Errorf("-server-id %q is not this agent's server (%s): nomadq answers debug requests for the agent asked only; run the command against that server", id, orDefault(local, "none"))
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// pickNodes resolves -node-id to the local node's ID.
func (c *debugCapture) pickNodes(self *api.AgentSelf, ids, class string, maxNodes int) ([]string, error) {
	if ids == "" {
		return nil, nil
	}
	local := self.Stats["client"]["node_id"]
	var out []string
	for _, id := range strings.Split(ids, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "all" && local == "":
			c.say("Note: \"-node-id=all\" specified but no clients found")
			continue
		case id == "all", id != "" && strings.HasPrefix(local, sanitizeUUIDPrefix(id)):
			id = local
		default:
			return nil, fmt.Errorf("-node-id %q is not this agent's node (%s): nomadq answers debug requests for the agent asked only; run the command against that node's agent", id, orDefault(local, "none"))
		}
		if class != "" {
			n, _, err := c.client.Nodes().Info(id, nil)
			if err != nil {
				return nil, fmt.Errorf("Error querying node info: %s", err)
			}
			if n.NodeClass != class {
				c.say("Note: node %s is of class %q, not %q: not captured", id, n.NodeClass, class)
				continue
			}
		}
		if !slices.Contains(out, id) && (maxNodes == 0 || len(out) < maxNodes) {
			out = append(out, id)
		}
	}
	return out, nil
}

func (c *debugCapture) say(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, format+"\n", args...)
}

func (c *debugCapture) sayVerbose(format string, args ...any) {
	if c.verbose {
		c.say(format, args...)
	}
}

func (c *debugCapture) warn(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.errw, format+"\n", args...)
}

func (c *debugCapture) q() *api.QueryOptions { return &api.QueryOptions{AllowStale: c.stale} }

// writeBytes writes one file of the bundle and records it.
func (c *debugCapture) writeBytes(dir, name string, data []byte) {
	full := filepath.Join(c.dir, dir, name)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		c.warn("%s: %v", filepath.Join(dir, name), err)
		return
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		c.warn("%s: %v", filepath.Join(dir, name), err)
		return
	}
	c.mu.Lock()
	c.manifest = append(c.manifest, filepath.Join(dir, name))
	c.mu.Unlock()
}

// writeJSON writes obj, or the error that kept it from being read, as
// Nomad's bundle does.
func (c *debugCapture) writeJSON(dir, name string, obj any, err error) {
	if err != nil {
		c.warn("%s: %v", filepath.Join(dir, name), err)
		obj = map[string]string{"Error": err.Error()}
	}
	b, merr := json.MarshalIndent(obj, "", "  ")
	if merr != nil {
		c.warn("%s: %v", filepath.Join(dir, name), merr)
		return
	}
	c.writeBytes(dir, name, b)
}

func (c *debugCapture) files() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.manifest)
	slices.Sort(out)
	return out
}

// target is one agent whose logs, host data and profiles are captured.
type debugTarget struct{ dir, serverID, nodeID string }

func (t debugTarget) path() string { return filepath.Join(t.dir, t.serverID+t.nodeID) }

func (c *debugCapture) targets() []debugTarget {
	var out []debugTarget
	for _, s := range c.servers {
		out = append(out, debugTarget{dir: debugServerDir, serverID: s})
	}
	for _, n := range c.nodes {
		out = append(out, debugTarget{dir: debugClientDir, nodeID: n})
	}
	return out
}

func (c *debugCapture) collect(ctx context.Context, self *api.AgentSelf, topics map[api.Topic][]string, eventIndex uint64) {
	var wg sync.WaitGroup
	for _, t := range c.targets() {
		wg.Go(func() { c.captureMonitor(ctx, t) })
	}
	if topics != nil {
		wg.Go(func() { c.captureEvents(ctx, topics, eventIndex) })
	}

	c.writeJSON(debugClusterDir, "agent-self.json", self, nil)
	members, err := c.client.Agent().MembersOpts(c.q())
	c.writeJSON(debugClusterDir, "members.json", members, err)
	if leader, err := c.client.Status().Leader(); err == nil {
		c.writeJSON(debugClusterDir, "leader.json", leader, nil)
	} else {
		c.warn("Failed to retrieve leader; err: %v", err)
	}
	namespaces, _, err := c.client.Namespaces().List(c.q())
	c.writeJSON(debugClusterDir, "namespaces.json", namespaces, err)
	regions, err := c.client.Regions().List()
	c.writeJSON(debugClusterDir, "regions.json", regions, err)
	nodes, _, err := c.client.Nodes().List(c.q())
	c.writeJSON(debugClusterDir, "nodes.json", nodes, err)
	for _, t := range c.targets() {
		host, err := c.client.Agent().Host(t.serverID, t.nodeID, c.q())
		c.writeJSON(t.path(), "agent-host.json", host, err)
	}

	wg.Go(func() { c.capturePprofs(ctx) })
	c.capturePeriodic(ctx)
	wg.Wait()
}

// capturePeriodic takes the cluster snapshots every interval until ctx
// ends.
func (c *debugCapture) capturePeriodic(ctx context.Context) {
	for n := 0; ; n++ {
		name := fmt.Sprintf("%04d", n)
		c.say("    Capture interval %s", name)
		dir := filepath.Join(debugIntervalDir, name)
		jobs, _, err := c.client.Jobs().List(c.q())
		c.writeJSON(dir, "jobs.json", jobs, err)
		c.writeJSON(dir, "deployments.json", []any{}, nil)
		evals, _, err := c.client.Evaluations().List(c.q())
		c.writeJSON(dir, "evaluations.json", evals, err)
		allocs, _, err := c.client.Allocations().List(c.q())
		c.writeJSON(dir, "allocations.json", allocs, err)
		nodes, _, err := c.client.Nodes().List(c.q())
		c.writeJSON(dir, "nodes.json", nodes, err)
		metrics, _, err := c.client.Operator().MetricsSummary(c.q())
		c.writeJSON(dir, "metrics.json", metrics, err)
		raft, err := c.client.Operator().RaftGetConfiguration(c.q())
		c.writeJSON(dir, "operator-raft.json", raft, err)
		sched, _, err := c.client.Operator().SchedulerGetConfiguration(c.q())
		c.writeJSON(dir, "operator-scheduler.json", sched, err)
		health, _, err := c.client.Operator().AutopilotServerHealth(c.q())
		c.writeJSON(dir, "operator-autopilot-health.json", health, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.interval):
		}
	}
}

// capturePprofs takes every target's profiles every pprof interval until
// ctx ends.
func (c *debugCapture) capturePprofs(ctx context.Context) {
	for n := 0; ; n++ {
		c.say("    Capture pprofInterval %04d", n)
		// A round, once started, is finished even when the capture's
		// time runs out during it: a bundle always has round 0000.
		for _, t := range c.targets() {
			c.capturePprof(context.WithoutCancel(ctx), t, n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.pprofInterval):
		}
	}
}

func (c *debugCapture) capturePprof(ctx context.Context, t debugTarget, n int) {
	opts := api.PprofOptions{Seconds: max(int(c.pprofDuration.Seconds()), 1), ServerID: t.serverID, NodeID: t.nodeID}
	q := c.q().WithContext(ctx)
	save := func(name string, bs []byte, err error) {
		if err != nil {
			if ctx.Err() == nil {
				c.warn("%s: Failed to retrieve pprof %s, err: %v", t.path(), name, err)
			}
			return
		}
		c.writeBytes(t.path(), name, bs)
	}
	bs, err := c.client.Agent().CPUProfile(opts, q)
	save(fmt.Sprintf("profile_%04d.prof", n), bs, err)
	for _, debug := range []int{1, 2} {
		o := opts
		o.Debug = debug
		bs, err := c.client.Agent().Lookup("goroutine", o, q)
		save(fmt.Sprintf("goroutine-debug%d_%04d.txt", debug, n), bs, err)
	}
	bs, err = c.client.Agent().Lookup("goroutine", opts, q)
	save(fmt.Sprintf("goroutine_%04d.prof", n), bs, err)
	bs, err = c.client.Agent().Trace(opts, q)
	save(fmt.Sprintf("trace_%04d.prof", n), bs, err)
	for _, p := range []string{"heap", "threadcreate"} {
		bs, err := c.client.Agent().Lookup(p, opts, q)
		save(fmt.Sprintf("%s_%04d.prof", p, n), bs, err)
	}
}

// captureMonitor writes the target's logs to monitor.log until ctx ends.
func (c *debugCapture) captureMonitor(ctx context.Context, t debugTarget) {
	c.sayVerbose("Launching monitor for %s", t.path())
	params := map[string]string{"log_level": c.logLevel, "plain": "true", "log_include_location": fmt.Sprint(c.logLocation)}
	if t.serverID != "" {
		params["server_id"] = t.serverID
	} else {
		params["node_id"] = t.nodeID
	}
	q := (&api.QueryOptions{Params: params}).WithContext(ctx)
	body, err := c.client.Raw().Response("/v1/agent/monitor", q)
	if err != nil {
		c.writeBytes(t.path(), "monitor.log", []byte(fmt.Sprintf("Error: could not follow the agent's logs: %v\n", err)))
		c.warn("%s: Failed to follow the logs: %v", t.path(), err)
		return
	}
	defer body.Close()
	// Logs go to the file as they come: a long capture at TRACE is big.
	dir := filepath.Join(c.dir, t.path())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.warn("%s: %v", t.path(), err)
		return
	}
	f, err := os.Create(filepath.Join(dir, "monitor.log"))
	if err != nil {
		c.warn("%s: %v", t.path(), err)
		return
	}
	_, _ = io.Copy(f, body)
	if err := f.Close(); err != nil {
		c.warn("%s: %v", t.path(), err)
	}
	c.mu.Lock()
	c.manifest = append(c.manifest, filepath.Join(t.path(), "monitor.log"))
	c.mu.Unlock()
}

// captureEvents writes the event stream to cluster/eventstream.json, one
// JSON object a line, until ctx ends.
func (c *debugCapture) captureEvents(ctx context.Context, topics map[api.Topic][]string, index uint64) {
	events, err := c.client.EventStream().Stream(ctx, topics, index, c.q())
	if err != nil {
		c.warn("Failed to follow the event stream: %v", err)
		return
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	for ev := range events {
		if ev.Err != nil {
			if ctx.Err() == nil {
				c.warn("Event stream: %v", ev.Err)
			}
			break
		}
		if ev.IsHeartbeat() {
			continue
		}
		_ = enc.Encode(ev)
	}
	c.writeBytes(debugClusterDir, "eventstream.json", []byte(buf.String()))
}

// tarGz writes the directory base under root as a gzip-compressed tar.
func tarGz(archive, root, base string) error {
	f, err := os.Create(archive)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	werr := filepath.WalkDir(filepath.Join(root, base), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	return errors.Join(werr, tw.Close(), gz.Close(), f.Close())
}
