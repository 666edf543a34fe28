package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

const nodeStatusUsage = `
Usage: nomad node status [options] <node>

  Display status information about a given node. The list of nodes
  returned includes only nodes which jobs may be scheduled to.
`

func runNodeStatus(args []string, s Streams) int {
	var (
		af      apiFlags
		verbose bool
		asJSON  bool
		tmpl    string
		self    bool
		short   bool
	)
	fs := newFlagSet("node status", s.Stderr, nodeStatusUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	fs.BoolVar(&asJSON, "json", false, "Output the node in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display node using a Go template")
	fs.BoolVar(&self, "self", false, "Query the status of the local node")
	fs.BoolVar(&short, "short", false, "Display short output")
	fs.Bool("os", false, "Display operating system name")
	fs.Bool("stats", false, "Display detailed resource usage statistics")
	fs.Bool("allocs", false, "Display a count of running allocations for each node")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes either one or no arguments")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	var nodeID string
	switch {
	case self:
		info, err := client.Agent().Self()
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying agent info: %s\n", err)
			return 1
		}
		nodeID = info.Stats["client"]["node_id"]
		if nodeID == "" {
			fmt.Fprintln(s.Stderr, "Local node not running in client mode")
			return 1
		}
	case fs.NArg() == 1:
		prefix := fs.Arg(0)
		if len(prefix) == 1 {
			fmt.Fprintln(s.Stderr, "Identifier must contain at least two characters.")
			return 1
		}
		nodes, _, err := client.Nodes().PrefixList(sanitizeUUIDPrefix(prefix))
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying node info: %s\n", err)
			return 1
		}
		if len(nodes) == 0 {
			fmt.Fprintf(s.Stderr, "No node(s) with prefix %q found\n", prefix)
			return 1
		}
		if len(nodes) > 1 {
			fmt.Fprintf(s.Stdout, "Prefix matched multiple nodes\n\n%s\n", formatNodeList(nodes, verbose))
			return 0
		}
		nodeID = nodes[0].ID
	default:
		nodes, _, err := client.Nodes().List(nil)
		if err != nil {
			fmt.Fprintf(s.Stderr, "Error querying node status: %s\n", err)
			return 1
		}
		if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, nodes); done {
			return code
		}
		if len(nodes) == 0 {
			fmt.Fprintln(s.Stdout, "No nodes registered")
			return 0
		}
		fmt.Fprintln(s.Stdout, formatNodeList(nodes, verbose))
		return 0
	}
	node, _, err := client.Nodes().Info(nodeID, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying node info: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, node); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatNode(node, verbose))
	if short {
		return 0
	}
	allocs, _, err := client.Nodes().Allocations(node.ID, nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying node allocations: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "\nAllocated Resources\n%s\n", formatNodeResources(node, allocs))
	if _, err := client.Nodes().Stats(node.ID, nil); err != nil {
		fmt.Fprintf(s.Stderr, "error fetching node stats: %v\n", err)
	}
	fmt.Fprintln(s.Stdout, "\nAllocations")
	if len(allocs) == 0 {
		fmt.Fprintln(s.Stdout, "No allocations placed")
		return 0
	}
	rows := []string{"ID|Node ID|Task Group|Version|Desired|Status|Created|Modified"}
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].CreateIndex > allocs[j].CreateIndex })
	now := time.Now()
	for _, a := range allocs {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s|%s|%s", shortID(a.ID, verbose), shortID(a.NodeID, verbose), a.TaskGroup, jobVersion(a),
			a.DesiredStatus, a.ClientStatus, prettyTimeDiff(time.Unix(0, a.CreateTime), now), prettyTimeDiff(time.Unix(0, a.ModifyTime), now)))
	}
	fmt.Fprintln(s.Stdout, withNodeAllocDeadlines(formatList(rows), allocs, verbose))
	return 0
}

func formatNodeList(nodes []*api.NodeListStub, verbose bool) string {
	rows := []string{"ID|Node Pool|DC|Name|Class|Drain|Eligibility|Status"}
	if verbose {
		rows[0] = "ID|Node Pool|DC|Name|Class|Address|Version|Drain|Eligibility|Status"
	}
	for _, n := range nodes {
		class := n.NodeClass
		if class == "" {
			class = "<none>"
		}
		if verbose {
			rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%v|%s|%s", n.ID, n.NodePool, n.Datacenter, n.Name, class, n.Address, n.Version, n.Drain, n.SchedulingEligibility, n.Status))
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%v|%s|%s", shortID(n.ID, false), n.NodePool, n.Datacenter, n.Name, class, n.Drain, n.SchedulingEligibility, n.Status))
	}
	return formatList(rows)
}

func formatNode(n *api.Node, verbose bool) string {
	var drivers []string
	for _, name := range sortedKeys(n.Drivers) {
		if d := n.Drivers[name]; d != nil && d.Detected && d.Healthy {
			drivers = append(drivers, name)
		}
	}
	rows := []string{
		"ID|" + shortID(n.ID, verbose),
		"Name|" + n.Name,
		"Node Pool|" + n.NodePool,
		"Class|" + orNone(n.NodeClass),
		"DC|" + n.Datacenter,
		"Drain|" + formatDrain(n),
		"Eligibility|" + n.SchedulingEligibility,
		"Status|" + n.Status,
		"CSI Controllers|<none>",
		"CSI Drivers|<none>",
		"Host Volumes|<none>",
		"Host Networks|<none>",
		"CSI Volumes|<none>",
		"Driver Status|" + orNone(strings.Join(drivers, ",")),
	}
	out := formatKV(rows)
	out += "\n\nNode Events\n"
	erows := []string{"Time|Subsystem|Message"}
	for i := len(n.Events) - 1; i >= 0; i-- {
		e := n.Events[i]
		erows = append(erows, fmt.Sprintf("%s|%s|%s", formatTime(e.Timestamp), e.Subsystem, e.Message))
	}
	out += formatList(erows)
	if verbose {
		out += "\n\nAttributes\n"
		var arows []string
		for _, k := range sortedKeys(n.Attributes) {
			arows = append(arows, k+"|"+n.Attributes[k])
		}
		out += formatKV(arows)
		out += "\n\nMeta\n"
		var mrows []string
		for _, k := range sortedKeys(n.Meta) {
			mrows = append(mrows, k+"|"+n.Meta[k])
		}
		out += formatKV(mrows)
	}
	return out
}

func formatNodeResources(n *api.Node, allocs []*api.Allocation) string {
	var cpu, mem, disk int64
	for _, a := range allocs {
		if a.ClientStatus != "running" && a.ClientStatus != "pending" || a.DesiredStatus != "run" {
			continue
		}
		if a.Resources != nil {
			if a.Resources.CPU != nil {
				cpu += int64(*a.Resources.CPU)
			}
			if a.Resources.MemoryMB != nil {
				mem += int64(*a.Resources.MemoryMB)
			}
			if a.Resources.DiskMB != nil {
				disk += int64(*a.Resources.DiskMB)
			}
		}
	}
	var totalCPU, totalMem, totalDisk int64
	if r := n.NodeResources; r != nil {
		totalCPU, totalMem, totalDisk = r.Cpu.CpuShares, r.Memory.MemoryMB, r.Disk.DiskMB
	}
	if r := n.ReservedResources; r != nil {
		totalCPU -= int64(r.Cpu.CpuShares)
		totalMem -= int64(r.Memory.MemoryMB)
		totalDisk -= int64(r.Disk.DiskMB)
	}
	const mib = 1024 * 1024
	rows := []string{
		"CPU|Memory|Disk",
		fmt.Sprintf("%d/%d MHz|%s/%s|%s/%s", cpu, totalCPU, humanBytes(uint64(mem)*mib), humanBytes(uint64(totalMem)*mib), humanBytes(uint64(disk)*mib), humanBytes(uint64(totalDisk)*mib)),
	}
	return formatList(rows)
}

// formatDrain is the node's Drain row: "false", or "true" with the
// deadline ("force drain", "no deadline" or the time) and whether system
// jobs are left, as Nomad shows it.
func formatDrain(n *api.Node) string {
	d := n.DrainStrategy
	if d == nil {
		return fmt.Sprint(n.Drain)
	}
	parts := []string{"true"}
	switch {
	case d.Deadline < 0:
		parts = append(parts, "force drain")
	case d.ForceDeadline.IsZero():
		parts = append(parts, "no deadline")
	default:
		parts = append(parts, formatTime(d.ForceDeadline)+" deadline")
	}
	if d.IgnoreSystemJobs {
		parts = append(parts, "ignoring system jobs")
	}
	return strings.Join(parts, "; ")
}
