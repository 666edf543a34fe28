package command

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

const nodeMetaApplyUsage = `
Usage: nomad node meta apply [-node-id ...] [-unset ...] key1=value1 ... kN=vN

  Modify a node's metadata. This command only applies to client agents, and
  changes the scheduling metadata the node registers: the node sends it to
  the servers at once, and the client keeps it across restarts. A key set
  in the agent's configuration can be unset too.

Node Meta Apply Options:

  -node-id <id>       The node to change (an ID or prefix); by default the
                      node of the agent receiving the request.
  -unset k1,...,kN    Unset the comma separated list of keys.

  Example:
    $ nomad node meta apply -unset testing,tempvar ready=1 role=preinit-db
`

const nodeMetaReadUsage = `
Usage: nomad node meta read [-json] [-t <template>] [-node-id ...]

  Read a node's metadata from the client: all of it, the dynamic changes
  made with "node meta apply", and the metadata of the agent's
  configuration.

Node Meta Options:

  -node-id <id>   The node to read (an ID or prefix); by default the node of
                  the agent receiving the request.
  -json           Output the node metadata in its JSON format.
  -t              Format and display node metadata using a Go template.
`

// nodeIDFlag resolves -node-id to a full node ID ("" stays "").
func nodeIDFlag(client *api.Client, prefix string) (string, error) {
	if prefix == "" {
		return "", nil
	}
	if len(prefix) == 1 {
		return "", errors.New("Identifier must contain at least two characters.")
	}
	prefix = sanitizeUUIDPrefix(prefix)
	nodes, _, err := client.Nodes().PrefixList(prefix)
	if err != nil {
		return "", fmt.Errorf("Error querying node: %s", err)
	}
	switch len(nodes) {
	case 0:
		return "", fmt.Errorf("No node(s) with prefix or id %q found", prefix)
	case 1:
		return nodes[0].ID, nil
	}
	return "", fmt.Errorf("Prefix matched multiple nodes\n\n%s", formatNodeList(nodes, true))
}

func runNodeMetaApply(args []string, s Streams) int {
	var (
		af            apiFlags
		unset, nodeID string
	)
	fs := newFlagSet("node meta apply", s.Stderr, nodeMetaApplyUsage)
	af.register(fs)
	fs.StringVar(&unset, "unset", "", "Unset the comma separated list of keys")
	fs.StringVar(&nodeID, "node-id", "", "The node to change")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if unset == "" && fs.NArg() == 0 {
		fmt.Fprintln(s.Stderr, "Must specify -unset or at least 1 key=value pair")
		return 1
	}
	meta := make(map[string]*string, fs.NArg())
	for _, pair := range fs.Args() {
		k, v, _ := strings.Cut(pair, "=")
		meta[k] = &v
	}
	for _, k := range strings.Split(unset, ",") {
		if k != "" {
			meta[k] = nil
		}
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if nodeID, err = nodeIDFlag(client, nodeID); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if _, err := client.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{NodeID: nodeID, Meta: meta}, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error applying dynamic node metadata: %s\n", err)
		return 1
	}
	return 0
}

func runNodeMetaRead(args []string, s Streams) int {
	var (
		af     apiFlags
		nodeID string
		tmpl   string
		asJSON bool
	)
	fs := newFlagSet("node meta read", s.Stderr, nodeMetaReadUsage)
	af.register(fs)
	fs.StringVar(&nodeID, "node-id", "", "The node to read")
	fs.BoolVar(&asJSON, "json", false, "Output the node metadata in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display node metadata using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	nodeID, err := nodeIDFlag(client, nodeID)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	meta, err := client.Nodes().Meta().Read(nodeID, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error reading dynamic node metadata: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, meta); done {
		return code
	}
	kv := func(m map[string]string) string {
		keys := sortedKeys(m)
		rows := make([]string, 0, len(keys))
		for _, k := range keys {
			rows = append(rows, k+"|"+m[k])
		}
		return formatKV(rows)
	}
	fmt.Fprintln(s.Stdout, "All Meta")
	fmt.Fprintln(s.Stdout, kv(meta.Meta))
	fmt.Fprintln(s.Stdout, "\nDynamic Meta")
	dkeys := make([]string, 0, len(meta.Dynamic))
	for k := range meta.Dynamic {
		dkeys = append(dkeys, k)
	}
	sort.Strings(dkeys)
	rows := make([]string, 0, len(dkeys))
	for _, k := range dkeys {
		v := "<unset>"
		if meta.Dynamic[k] != nil {
			v = *meta.Dynamic[k]
		}
		rows = append(rows, k+"|"+v)
	}
	fmt.Fprintln(s.Stdout, formatKV(rows))
	fmt.Fprintln(s.Stdout, "\nStatic Meta")
	fmt.Fprintln(s.Stdout, kv(meta.Static))
	return 0
}
