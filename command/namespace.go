package command

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

const namespaceApplyUsage = `
Usage: nomad namespace apply [options] <input>

  Apply is used to create or update a namespace. The specification file
  will be read from stdin by specifying "-", otherwise a path to the file is
  expected.

  Instead of a file, you may instead pass the namespace name to create
  or update as the only argument.
`

func runNamespaceApply(args []string, s Streams) int {
	var (
		af          apiFlags
		jsonInput   bool
		description string
		quota       string
	)
	fs := newFlagSet("namespace apply", s.Stderr, namespaceApplyUsage)
	af.register(fs)
	fs.StringVar(&description, "description", "", "An optional description for the namespace")
	fs.StringVar(&quota, "quota", "", "The quota to attach to the namespace (refused: quotas are a Nomad Enterprise feature)")
	fs.BoolVar(&jsonInput, "json", false, "Parse the input as a JSON namespace specification")
	client, ok := parseOneArg(fs, &af, args, "<input>", s)
	if !ok {
		return 1
	}
	input := fs.Arg(0)
	var ns *api.Namespace
	if fi, statErr := os.Stat(input); input == "-" || (statErr == nil && !fi.IsDir()) {
		if isSet(fs, "description") || isSet(fs, "quota") {
			fmt.Fprintln(s.Stderr, "Flags are ignored when a file is specified!")
		}
		raw, err := readInput(input, s.Stdin)
		if err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		if jsonInput {
			ns = new(api.Namespace)
			if err := json.Unmarshal(raw, ns); err != nil {
				fmt.Fprintf(s.Stderr, "Failed to parse namespace: %v\n", err)
				return 1
			}
		} else if ns, err = parseNamespaceSpec(raw, input); err != nil {
			fmt.Fprintf(s.Stderr, "Error parsing namespace specification: %s\n", err)
			return 1
		}
	} else {
		var err error
		ns, _, err = client.Namespaces().Info(input, nil)
		if err != nil && responseStatus(err) != http.StatusNotFound {
			fmt.Fprintf(s.Stderr, "Error looking up namespace: %s\n", err)
			return 1
		}
		if ns == nil {
			ns = &api.Namespace{Name: input}
		}
		if isSet(fs, "description") {
			ns.Description = description
		}
		if isSet(fs, "quota") {
			ns.Quota = quota
		}
	}
	if _, err := client.Namespaces().Register(ns, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error applying namespace: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Successfully applied namespace %q!\n", ns.Name)
	return 0
}

// readInput reads a spec file, or stdin for "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("Failed to read stdin: %v", err)
		}
		return raw, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("Failed to read file %q: %v", path, err)
	}
	return raw, nil
}

// namespaceSpec is the HCL form of a namespace specification.
type namespaceSpec struct {
	Name           string                 `hcl:"name,optional"`
	Description    string                 `hcl:"description,optional"`
	Quota          string                 `hcl:"quota,optional"`
	MetaBlock      *metaBlock             `hcl:"meta,block"`
	Capabilities   *namespaceCapabilities `hcl:"capabilities,block"`
	NodePoolConfig *defaultAllowedDenied  `hcl:"node_pool_config,block"`
	Vault          *defaultAllowedDenied  `hcl:"vault,block"`
	Consul         *defaultAllowedDenied  `hcl:"consul,block"`
	RequiredClaims *map[string]string     `hcl:"required_extra_claims,optional"`
	OptionalClaims *map[string]string     `hcl:"optional_extra_claims,optional"`
}

type metaBlock struct {
	Body hcl.Body `hcl:",remain"`
}

type namespaceCapabilities struct {
	EnabledTaskDrivers   []string `hcl:"enabled_task_drivers,optional"`
	DisabledTaskDrivers  []string `hcl:"disabled_task_drivers,optional"`
	EnabledNetworkModes  []string `hcl:"enabled_network_modes,optional"`
	DisabledNetworkModes []string `hcl:"disabled_network_modes,optional"`
}

type defaultAllowedDenied struct {
	Default string   `hcl:"default,optional"`
	Allowed []string `hcl:"allowed,optional"`
	Denied  []string `hcl:"denied,optional"`
}

// parseNamespaceSpec decodes an HCL namespace specification. Blocks the
// server does not honour (node_pool_config, vault, consul) are passed on
// so that the server refuses them by name.
func parseNamespaceSpec(src []byte, filename string) (*api.Namespace, error) {
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec namespaceSpec
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	ns := &api.Namespace{Name: spec.Name, Description: spec.Description, Quota: spec.Quota}
	if spec.MetaBlock != nil {
		meta, err := decodeMeta(spec.MetaBlock)
		if err != nil {
			return nil, err
		}
		ns.Meta = meta
	}
	if c := spec.Capabilities; c != nil {
		ns.Capabilities = &api.NamespaceCapabilities{
			EnabledTaskDrivers: c.EnabledTaskDrivers, DisabledTaskDrivers: c.DisabledTaskDrivers,
			EnabledNetworkModes: c.EnabledNetworkModes, DisabledNetworkModes: c.DisabledNetworkModes,
		}
	}
	if c := spec.NodePoolConfig; c != nil {
		ns.NodePoolConfiguration = &api.NamespaceNodePoolConfiguration{Default: c.Default, Allowed: c.Allowed, Denied: c.Denied}
	}
	if c := spec.Vault; c != nil {
		ns.VaultConfiguration = &api.NamespaceVaultConfiguration{Default: c.Default, Allowed: c.Allowed, Denied: c.Denied}
	}
	if c := spec.Consul; c != nil {
		ns.ConsulConfiguration = &api.NamespaceConsulConfiguration{Default: c.Default, Allowed: c.Allowed, Denied: c.Denied}
	}
	if spec.RequiredClaims != nil {
		ns.RequiredExtraClaims = *spec.RequiredClaims
	}
	if spec.OptionalClaims != nil {
		ns.OptionalExtraClaims = *spec.OptionalClaims
	}
	return ns, nil
}

const namespaceListUsage = `
Usage: nomad namespace list [options]

  List is used to list available namespaces.
`

func runNamespaceList(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("namespace list", s.Stderr, namespaceListUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the namespaces in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the namespaces using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	list, _, err := client.Namespaces().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving namespaces: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, list); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatNamespaces(list))
	return 0
}

// formatNamespaces lists namespaces by name, as Nomad's CLI does.
func formatNamespaces(list []*api.Namespace) string {
	if len(list) == 0 {
		return "No namespaces found"
	}
	sorted := append([]*api.Namespace(nil), list...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	rows := []string{"Name|Description"}
	for _, ns := range sorted {
		rows = append(rows, ns.Name+"|"+ns.Description)
	}
	return formatList(rows)
}

const namespaceStatusUsage = `
Usage: nomad namespace status [options] <namespace>

  Status is used to view the status of a particular namespace.
`

func runNamespaceStatus(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("namespace status", s.Stderr, namespaceStatusUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the namespace in a JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the namespace using a Go template")
	client, ok := parseOneArg(fs, &af, args, "<namespace>", s)
	if !ok {
		return 1
	}
	ns, possible, err := namespaceByPrefix(client, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving namespaces: %s\n", err)
		return 1
	}
	if len(possible) != 0 {
		fmt.Fprintf(s.Stderr, "Prefix matched multiple namespaces\n\n%s\n", formatNamespaces(possible))
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, ns); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatNamespaceBasics(ns))
	if len(ns.Meta) > 0 {
		var rows []string
		for _, k := range sortedKeys(ns.Meta) {
			rows = append(rows, k+"|"+ns.Meta[k])
		}
		fmt.Fprintf(s.Stdout, "\nMetadata\n%s\n", formatKV(rows))
	}
	return 0
}

// namespaceByPrefix returns the namespace the prefix names: the only
// match, or the exact one among several; otherwise all matches.
func namespaceByPrefix(client *api.Client, prefix string) (*api.Namespace, []*api.Namespace, error) {
	list, _, err := client.Namespaces().PrefixList(prefix, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(list) == 0 {
		return nil, nil, fmt.Errorf("Namespace %q matched no namespaces", prefix)
	}
	one, many := pickByName(list, prefix, func(n *api.Namespace) string { return n.Name })
	return one, many, nil
}

// pickByName resolves a prefix match: the only item, or the one named
// exactly prefix; otherwise every item, for the user to choose from.
func pickByName[T any](items []T, prefix string, name func(T) string) (T, []T) {
	var zero T
	if len(items) == 1 {
		return items[0], nil
	}
	for _, it := range items {
		if name(it) == prefix {
			return it, nil
		}
	}
	return zero, items
}

func formatNamespaceBasics(ns *api.Namespace) string {
	enabledDrivers, disabledDrivers, enabledModes, disabledModes := "*", "", "*", ""
	if c := ns.Capabilities; c != nil {
		if len(c.EnabledTaskDrivers) > 0 {
			enabledDrivers = strings.Join(c.EnabledTaskDrivers, ",")
		}
		disabledDrivers = strings.Join(c.DisabledTaskDrivers, ",")
		if len(c.EnabledNetworkModes) > 0 {
			enabledModes = strings.Join(c.EnabledNetworkModes, ",")
		}
		disabledModes = strings.Join(c.DisabledNetworkModes, ",")
	}
	return formatKV([]string{
		"Name|" + ns.Name,
		"Description|" + ns.Description,
		"Quota|" + ns.Quota,
		"Enabled Drivers|" + enabledDrivers,
		"Disabled Drivers|" + disabledDrivers,
		"Enabled Network Modes|" + enabledModes,
		"Disabled Network Modes|" + disabledModes,
	})
}

const namespaceDeleteUsage = `
Usage: nomad namespace delete [options] <namespace>

  Delete is used to remove a namespace. A namespace that still holds
  non-terminal jobs or allocations, and the default namespace, cannot be
  deleted.
`

func runNamespaceDelete(args []string, s Streams) int {
	return runDeleteByName("namespace delete", namespaceDeleteUsage, "namespace", "<namespace>", args, s,
		func(c *api.Client, name string) error {
			_, err := c.Namespaces().Delete(name, nil)
			return err
		})
}

// runDeleteByName is the shape of the delete commands of named objects:
// one argument, one API call, Nomad's success line.
func runDeleteByName(command, usage, what, argName string, args []string, s Streams, del func(*api.Client, string) error) int {
	var af apiFlags
	fs := newFlagSet(command, s.Stderr, usage)
	af.register(fs)
	client, ok := parseOneArg(fs, &af, args, argName, s)
	if !ok {
		return 1
	}
	name := fs.Arg(0)
	if err := del(client, name); err != nil {
		fmt.Fprintf(s.Stderr, "Error deleting %s: %s\n", what, err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Successfully deleted %s %q!\n", what, name)
	return 0
}
