package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

const nodePoolApplyUsage = `
Usage: nomad node pool apply [options] <input>

  Apply is used to create or update a node pool. The specification file is
  read from stdin by specifying "-", otherwise a path to the file is
  expected.
`

func runNodePoolApply(args []string, s Streams) int {
	var (
		af        apiFlags
		jsonInput bool
	)
	fs := newFlagSet("node pool apply", s.Stderr, nodePoolApplyUsage)
	af.register(fs)
	fs.BoolVar(&jsonInput, "json", false, "Parse the input as a JSON node pool specification")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <input>")
		return 1
	}
	path := fs.Arg(0)
	raw, err := readInput(path, s.Stdin)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	var pool *api.NodePool
	if jsonInput {
		pool = new(api.NodePool)
		err = json.Unmarshal(raw, pool)
	} else {
		pool, err = parseNodePoolSpec(raw, path)
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Failed to parse input content: %v\n", err)
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if _, err := client.NodePools().Register(pool, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error applying node pool: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Successfully applied node pool %q!\n", pool.Name)
	return 0
}

// nodePoolFile is the HCL form of a node pool specification:
// node_pool "name" { ... }.
type nodePoolFile struct {
	Pool *nodePoolBlock `hcl:"node_pool,block"`
}

type nodePoolBlock struct {
	Name            string                 `hcl:"name,label"`
	Description     string                 `hcl:"description,optional"`
	NodeIdentityTTL string                 `hcl:"node_identity_ttl,optional"`
	Meta            *metaBlock             `hcl:"meta,block"`
	SchedulerConfig *nodePoolSchedulerSpec `hcl:"scheduler_config,block"`
}

type nodePoolSchedulerSpec struct {
	SchedulerAlgorithm            string `hcl:"scheduler_algorithm,optional"`
	MemoryOversubscriptionEnabled *bool  `hcl:"memory_oversubscription_enabled,optional"`
}

// parseNodePoolSpec decodes an HCL node pool specification. A
// scheduler_config block is passed on so that the server refuses it by
// name.
func parseNodePoolSpec(src []byte, filename string) (*api.NodePool, error) {
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec nodePoolFile
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	if spec.Pool == nil {
		return nil, fmt.Errorf("%s: no node_pool block", filename)
	}
	b := spec.Pool
	pool := &api.NodePool{Name: b.Name, Description: b.Description}
	if b.NodeIdentityTTL != "" {
		d, err := time.ParseDuration(b.NodeIdentityTTL)
		if err != nil {
			return nil, fmt.Errorf("node_identity_ttl %q is not a duration (for example \"24h\"): %v", b.NodeIdentityTTL, err)
		}
		pool.NodeIdentityTTL = d
	}
	if b.Meta != nil {
		meta, err := decodeMeta(b.Meta)
		if err != nil {
			return nil, err
		}
		pool.Meta = meta
	}
	if c := b.SchedulerConfig; c != nil {
		pool.SchedulerConfiguration = &api.NodePoolSchedulerConfiguration{
			SchedulerAlgorithm:            api.SchedulerAlgorithm(c.SchedulerAlgorithm),
			MemoryOversubscriptionEnabled: c.MemoryOversubscriptionEnabled,
		}
	}
	return pool, nil
}

// decodeMeta reads a meta { key = "value" } block.
func decodeMeta(m *metaBlock) (map[string]string, error) {
	attrs, diags := m.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, diags
	}
	meta := make(map[string]string, len(attrs))
	for name, attr := range attrs {
		var v string
		if diags := gohcl.DecodeExpression(attr.Expr, nil, &v); diags.HasErrors() {
			return nil, diags
		}
		meta[name] = v
	}
	return meta, nil
}

// listFlags are the -filter, -per-page and -page-token flags of Nomad's
// paginated list commands.
type listFlags struct {
	filter  string
	perPage int
	token   string
}

func (l *listFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.filter, "filter", "", "Filter expression (nomadq's subset of go-bexpr)")
	fs.IntVar(&l.perPage, "per-page", 0, "How many results to show per page")
	fs.StringVar(&l.token, "page-token", "", "Where to start pagination")
}

func (l *listFlags) query() *api.QueryOptions {
	return &api.QueryOptions{Filter: l.filter, PerPage: int32(l.perPage), NextToken: l.token}
}

// paginated tells how to get the next page, as Nomad's list commands do.
func paginated(s Streams, command string, qm *api.QueryMeta) {
	if qm != nil && qm.NextToken != "" {
		fmt.Fprintf(s.Stdout, "\nResults have been paginated. To get the next page run:\n\n%s -page-token %s\n", command, qm.NextToken)
	}
}

const nodePoolListUsage = `
Usage: nomad node pool list [options]

  List is used to list existing node pools.
`

func runNodePoolList(args []string, s Streams) int {
	var (
		af     apiFlags
		lf     listFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("node pool list", s.Stderr, nodePoolListUsage)
	af.register(fs)
	lf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the node pools in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the node pools using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	pools, qm, err := client.NodePools().List(lf.query())
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying node pools: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, pools); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatNodePoolList(pools))
	paginated(s, "nomad node pool list", qm)
	return 0
}

func formatNodePoolList(pools []*api.NodePool) string {
	rows := []string{"Name|Description"}
	for _, p := range pools {
		rows = append(rows, p.Name+"|"+p.Description)
	}
	return formatList(rows)
}

// nodePoolByPrefix returns the pool the prefix names: the only match, or
// the exact one among several; otherwise all matches.
func nodePoolByPrefix(client *api.Client, prefix string) (*api.NodePool, []*api.NodePool, error) {
	pools, _, err := client.NodePools().PrefixList(prefix, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(pools) == 0 {
		return nil, nil, fmt.Errorf("No node pool with prefix %q found", prefix)
	}
	one, many := pickByName(pools, prefix, func(p *api.NodePool) string { return p.Name })
	return one, many, nil
}

// onePool parses a command that takes one node pool argument and resolves
// it; ok is false when the command already failed.
func onePool(fs *flag.FlagSet, af *apiFlags, args []string, s Streams) (*api.Client, *api.NodePool, bool) {
	if err := fs.Parse(args); err != nil {
		return nil, nil, false
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <node-pool>")
		return nil, nil, false
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return nil, nil, false
	}
	pool, possible, err := nodePoolByPrefix(client, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving node pool: %s\n", err)
		return nil, nil, false
	}
	if len(possible) != 0 {
		fmt.Fprintf(s.Stderr, "Prefix matched multiple node pools\n\n%s\n", formatNodePoolList(possible))
		return nil, nil, false
	}
	return client, pool, true
}

const nodePoolInfoUsage = `
Usage: nomad node pool info [options] <node-pool>

  Info is used to fetch information about an existing node pool.
`

func runNodePoolInfo(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("node pool info", s.Stderr, nodePoolInfoUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the node pool in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the node pool using a Go template")
	_, pool, ok := onePool(fs, &af, args, s)
	if !ok {
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, pool); done {
		return code
	}
	basic := []string{"Name|" + pool.Name, "Description|" + pool.Description}
	if pool.NodeIdentityTTL > 0 {
		basic = append(basic, "Node Identity TTL|"+pool.NodeIdentityTTL.String())
	}
	fmt.Fprintln(s.Stdout, formatKV(basic))
	fmt.Fprintln(s.Stdout, "\nMetadata")
	if len(pool.Meta) > 0 {
		var rows []string
		for _, k := range sortedKeys(pool.Meta) {
			rows = append(rows, k+"|"+pool.Meta[k])
		}
		fmt.Fprintln(s.Stdout, formatKV(rows))
	} else {
		fmt.Fprintln(s.Stdout, "No metadata")
	}
	fmt.Fprintln(s.Stdout, "\nScheduler Configuration")
	fmt.Fprintln(s.Stdout, "No scheduler configuration")
	return 0
}

const nodePoolNodesUsage = `
Usage: nomad node pool nodes [options] <node-pool>

  Nodes is used to list the nodes in a node pool.
`

func runNodePoolNodes(args []string, s Streams) int {
	var (
		af      apiFlags
		lf      listFlags
		asJSON  bool
		tmpl    string
		verbose bool
	)
	fs := newFlagSet("node pool nodes", s.Stderr, nodePoolNodesUsage)
	af.register(fs)
	lf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the nodes in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the nodes using a Go template")
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	client, pool, ok := onePool(fs, &af, args, s)
	if !ok {
		return 1
	}
	nodes, qm, err := client.NodePools().ListNodes(pool.Name, lf.query())
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying nodes: %s\n", err)
		return 1
	}
	if len(nodes) == 0 {
		fmt.Fprintln(s.Stdout, "No nodes")
		return 0
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, nodes); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatNodeList(nodes, verbose))
	paginated(s, "nomad node pool nodes "+pool.Name, qm)
	return 0
}

const nodePoolJobsUsage = `
Usage: nomad node pool jobs [options] <node-pool>

  Jobs is used to list the jobs in a node pool, in the namespace of
  -namespace ("*" for all).
`

func runNodePoolJobs(args []string, s Streams) int {
	var (
		af     apiFlags
		lf     listFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("node pool jobs", s.Stderr, nodePoolJobsUsage)
	af.register(fs)
	lf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the jobs in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the jobs using a Go template")
	client, pool, ok := onePool(fs, &af, args, s)
	if !ok {
		return 1
	}
	jobs, qm, err := client.NodePools().ListJobs(pool.Name, lf.query())
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying jobs: %s\n", err)
		return 1
	}
	if len(jobs) == 0 {
		fmt.Fprintln(s.Stdout, "No jobs")
		return 0
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, jobs); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatJobList(jobs))
	paginated(s, "nomad node pool jobs "+pool.Name, qm)
	return 0
}

const nodePoolDeleteUsage = `
Usage: nomad node pool delete [options] <node-pool>

  Delete is used to remove a node pool. A pool that still has nodes or
  non-terminal jobs, and the built-in pools "all" and "default", cannot be
  deleted.
`

func runNodePoolDelete(args []string, s Streams) int {
	return runDeleteByName("node pool delete", nodePoolDeleteUsage, "node pool", "<node-pool>", args, s,
		func(c *api.Client, name string) error {
			_, err := c.NodePools().Delete(name, nil)
			return err
		})
}
