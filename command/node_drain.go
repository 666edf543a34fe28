package command

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// defaultDrainDeadline is the deadline of a drain that names none, as in
// Nomad.
const defaultDrainDeadline = time.Hour

const nodeDrainUsage = `
Usage: nomad node drain [options] <node>

  Toggles node draining on a specified node. Either -enable or -disable
  must be given, unless -monitor is. A draining node is ineligible for new
  placements; its allocations are migrated per their group's migrate
  block, batch allocations run until the deadline, and at the deadline
  whatever still runs is stopped and placed elsewhere.
`

func runNodeDrain(args []string, s Streams) int {
	var (
		af                                   apiFlags
		enable, disable, detach, force       bool
		noDeadline, ignoreSystem, keepInelig bool
		self, yes, monitor                   bool
		deadline, message                    string
		meta                                 stringList
	)
	fs := newFlagSet("node drain", s.Stderr, nodeDrainUsage)
	af.register(fs)
	fs.BoolVar(&enable, "enable", false, "Enable drain mode")
	fs.BoolVar(&disable, "disable", false, "Disable drain mode")
	fs.StringVar(&deadline, "deadline", "", "Deadline after which allocations are force stopped (default 1h)")
	fs.BoolVar(&detach, "detach", false, "Return immediately instead of monitoring the drain")
	fs.BoolVar(&force, "force", false, "Force immediate drain: stop every allocation now")
	fs.BoolVar(&noDeadline, "no-deadline", false, "Drain node with no deadline")
	fs.BoolVar(&ignoreSystem, "ignore-system", false, "Do not drain system job allocations from the node")
	fs.BoolVar(&keepInelig, "keep-ineligible", false, "Keep the node ineligible when the drain is disabled")
	fs.BoolVar(&self, "self", false, "Drain the local node")
	fs.BoolVar(&yes, "yes", false, "Automatic yes to prompts")
	fs.BoolVar(&monitor, "monitor", false, "Monitor the drain status of a draining node")
	fs.StringVar(&message, "m", "", "Drain message, kept in the node's drain metadata")
	fs.Var(&meta, "meta", "Drain metadata key=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	usageErr := func(msg string) int {
		fmt.Fprintln(s.Stderr, msg)
		fmt.Fprintln(s.Stderr, "For additional help try 'nomad node drain -help'")
		return 1
	}
	switch {
	case monitor && (enable || disable):
		return usageErr("The -monitor flag cannot be used with the '-enable' or '-disable' flags")
	case enable && disable, !monitor && !enable && !disable:
		return usageErr("Either the '-enable' or '-disable' flag must be set, unless using '-monitor'")
	case self && fs.NArg() != 0, !self && fs.NArg() != 1:
		return usageErr("Node ID must be specified if -self isn't being used")
	case disable && (deadline != "" || force || noDeadline || ignoreSystem):
		return usageErr("-disable can't be combined with flags configuring drain strategy")
	case deadline != "" && (force || noDeadline):
		return usageErr("-deadline can't be combined with -force or -no-deadline")
	case force && noDeadline:
		return usageErr("-force and -no-deadline are mutually exclusive")
	}
	d := defaultDrainDeadline
	switch {
	case force:
		d = -time.Second
	case noDeadline:
		d = 0
	case deadline != "":
		dur, err := time.ParseDuration(deadline)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Failed to parse deadline %q: %v\n", deadline, err)
			return 1
		}
		if dur <= 0 {
			fmt.Fprintln(s.Stderr, "A positive drain duration must be given")
			return 1
		}
		d = dur
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	prefix, node, meta0, err := resolveNodeArg(client, fs, self, "Error toggling drain mode")
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if monitor {
		if node.DrainStrategy == nil {
			fmt.Fprintln(s.Stderr, "No drain strategy set")
			return 0
		}
		fmt.Fprintf(s.Stdout, "%s: Monitoring node %q: Ctrl-C to detach monitoring\n", formatTime(time.Now()), node.ID)
		return monitorDrain(client, s, node.ID, meta0.LastIndex, ignoreSystem)
	}
	if prefix != node.ID && !yes {
		verb := "enable"
		if disable {
			verb = "disable"
		}
		fmt.Fprintf(s.Stdout, "Are you sure you want to %s drain mode for node %q? [y/N] ", verb, node.ID)
		answer, _ := bufio.NewReader(s.Stdin).ReadString('\n')
		answer = strings.TrimSpace(answer)
		switch {
		case answer == "" || strings.ToLower(answer)[0] == 'n':
			fmt.Fprintln(s.Stdout, "Canceling drain toggle")
			return 0
		case answer != "y":
			fmt.Fprintln(s.Stdout, "No confirmation detected. For confirmation, an exact 'y' is required.")
			return 1
		}
	}
	var spec *api.DrainSpec
	if enable {
		spec = &api.DrainSpec{Deadline: d, IgnoreSystemJobs: ignoreSystem}
	}
	drainMeta := make(map[string]string)
	if disable && node.LastDrain != nil {
		for k, v := range node.LastDrain.Meta {
			drainMeta[k] = v
		}
	}
	if message != "" {
		key := "message"
		if disable {
			key = "cancel_message"
		}
		drainMeta[key] = message
	}
	for _, m := range meta {
		if m == "" {
			continue
		}
		k, v, _ := strings.Cut(m, "=")
		drainMeta[k] = v
	}
	resp, err := client.Nodes().UpdateDrainOpts(node.ID, &api.DrainOptions{DrainSpec: spec, MarkEligible: !keepInelig, Meta: drainMeta}, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error updating drain specification: %s\n", err)
		return 1
	}
	switch {
	case disable:
		fmt.Fprintf(s.Stdout, "Node %q drain strategy unset\n", node.ID)
	case detach:
		fmt.Fprintf(s.Stdout, "Node %q drain strategy set\n", node.ID)
	default:
		now := time.Now()
		fmt.Fprintf(s.Stdout, "%s: Ctrl-C to stop monitoring: will not cancel the node drain\n", formatTime(now))
		fmt.Fprintf(s.Stdout, "%s: Node %q drain strategy set\n", formatTime(now), node.ID)
		return monitorDrain(client, s, node.ID, resp.LastIndex, ignoreSystem)
	}
	return 0
}

// monitorDrain prints the drain's progress, as the official client
// reports it, until the drain is over.
func monitorDrain(client *api.Client, s Streams, nodeID string, index uint64, ignoreSystem bool) int {
	for msg := range client.Nodes().MonitorDrain(context.Background(), nodeID, index, ignoreSystem) {
		line := fmt.Sprintf("%s: %s", formatTime(time.Now()), msg)
		if msg.Level == api.MonitorMsgLevelError {
			fmt.Fprintln(s.Stderr, line)
			return 1
		}
		fmt.Fprintln(s.Stdout, line)
	}
	return 0
}

// resolveNodeArg finds the node a node command names: the local node with
// -self, else the one node whose ID starts with the argument. It returns
// the argument as given (after prefix clean-up), the node and the read's
// metadata; errors are worded as Nomad's CLI words them, with errPrefix
// before failed reads.
func resolveNodeArg(client *api.Client, fs *flag.FlagSet, self bool, errPrefix string) (string, *api.Node, *api.QueryMeta, error) {
	var id string
	if self {
		info, err := client.Agent().Self()
		if err != nil {
			return "", nil, nil, fmt.Errorf("Error querying agent info: %s", err)
		}
		if id = info.Stats["client"]["node_id"]; id == "" {
			return "", nil, nil, errors.New("Local node not running in client mode")
		}
	} else {
		id = fs.Arg(0)
	}
	if len(id) == 1 {
		return "", nil, nil, errors.New("Identifier must contain at least two characters.")
	}
	id = sanitizeUUIDPrefix(id)
	nodes, _, err := client.Nodes().PrefixList(id)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %s", errPrefix, err)
	}
	switch len(nodes) {
	case 0:
		return "", nil, nil, fmt.Errorf("No node(s) with prefix or id %q found", id)
	case 1:
	default:
		return "", nil, nil, fmt.Errorf("Prefix matched multiple nodes\n\n%s", formatNodeList(nodes, true))
	}
	node, qm, err := client.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %s", errPrefix, err)
	}
	return id, node, qm, nil
}
