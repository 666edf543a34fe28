package command

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/hashicorp/nomad/api"
)

// interruptContext is cancelled when the user interrupts a command that
// streams until stopped; tests replace it.
var interruptContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

const agentMonitorUsage = `
Usage: nomad monitor [options]

  Stream the log of a Nomad agent, at a level of its own (-log-level) that
  may be more detailed than what the agent writes to its log. The agent
  asked answers for itself: -node-id and -server-id must name that agent's
  node or server, nomadq does not forward the stream between agents.
  Streams until interrupted.
`

func runAgentMonitor(args []string, s Streams) int {
	var (
		af                      apiFlags
		level, nodeID, serverID string
		asJSON, location        bool
	)
	fs := newFlagSet("monitor", s.Stderr, agentMonitorUsage)
	af.register(fs)
	fs.StringVar(&level, "log-level", "", "The log level to stream (default: INFO)")
	fs.BoolVar(&location, "log-include-location", false, "Include file and line information in each log line")
	fs.StringVar(&nodeID, "node-id", "", "The node to monitor (an ID prefix of this agent's node)")
	fs.StringVar(&serverID, "server-id", "", "The server to monitor (this agent's server name or ID, or \"leader\")")
	fs.BoolVar(&asJSON, "json", false, "Stream log lines in JSON format")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	if nodeID != "" {
		var err error
		if nodeID, err = nodeIDByPrefix(client, nodeID); err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
	}
	ctx, cancel := interruptContext()
	defer cancel()
	q := (&api.QueryOptions{Params: map[string]string{
		"log_level":            level,
		"node_id":              nodeID,
		"server_id":            serverID,
		"log_json":             strconv.FormatBool(asJSON),
		"log_include_location": strconv.FormatBool(location),
	}}).WithContext(ctx)
	frames, errCh := client.Agent().Monitor(ctx.Done(), q)
	if frames == nil {
		fmt.Fprintf(s.Stderr, "Error starting monitor: %s\n", <-errCh)
		return 1
	}
	for {
		select {
		case <-ctx.Done():
			return 0
		case f, ok := <-frames:
			if !ok {
				select {
				case <-ctx.Done():
					return 0
				case err := <-errCh:
					fmt.Fprintf(s.Stderr, "Error monitoring logs: %s\n", err)
					return 1
				}
			}
			if _, err := s.Stdout.Write(f.Data); err != nil {
				return 1
			}
		}
	}
}

// nodeIDByPrefix resolves a node ID prefix to the one node it names.
func nodeIDByPrefix(client *api.Client, prefix string) (string, error) {
	if len(prefix) == 1 {
		return "", fmt.Errorf("Node ID must contain at least two characters.")
	}
	nodes, _, err := client.Nodes().PrefixList(sanitizeUUIDPrefix(prefix))
	if err != nil {
		return "", fmt.Errorf("Error querying node: %s", err)
	}
	switch {
	case len(nodes) == 0:
		return "", fmt.Errorf("No node(s) with prefix or id %q found", prefix)
	case len(nodes) > 1:
		return "", fmt.Errorf("Prefix %q matched %d nodes: give more of the ID", prefix, len(nodes))
	}
	return nodes[0].ID, nil
}
