package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
	"github.com/zclconf/go-cty/cty"
)

const varPutUsage = `
Usage:
nomad var put [options] <variable spec file reference> [<key>=<value>]...
nomad var put [options] <path to store variable> [<variable spec file reference>] [<key>=<value>]...

  The 'var put' command is used to create or update an existing variable.
  A whole specification comes from standard input ("-") or from an
  @-prefixed file; items come from the specification, from key=value
  arguments, or both (arguments win). A value may be a string, an
  @-prefixed file, or "-" for standard input; "key=" removes the item.

  Without -force or -check-index the variable must not exist yet (a
  check-and-set at index 0), or must still be at the modify index its
  specification gives.

  -check-index
     Write only if the server-side version's modify index matches.

  -force
     Write regardless of the state or index of the variable on the server.

  -in (hcl | json)
     Parser for a specification from standard input or a file whose
     extension does not tell. Defaults to "json".

  -out (go-template | hcl | json | none | table)
     Format to render the written variable in. Defaults to "none" when
     stdout is a terminal and "json" when it is redirected.

  -template
     Template to render output with. Required when format is "go-template".

  -verbose
     Report each step on standard error.
`

func runVarPut(args []string, s Streams) int {
	var af apiFlags
	var checkIndex, in, out, tmpl string
	var force, verbose bool
	fs := newFlagSet("var put", s.Stderr, varPutUsage)
	af.register(fs)
	fs.StringVar(&checkIndex, "check-index", "", "Write only if the server-side index matches")
	fs.BoolVar(&force, "force", false, "Write regardless of the server-side index")
	fs.StringVar(&in, "in", "json", "Parser for the specification: hcl or json")
	fs.StringVar(&out, "out", "", "Format to render the written variable in")
	fs.StringVar(&tmpl, "template", "", "Template to render output with")
	fs.BoolVar(&verbose, "verbose", false, "Report each step on standard error")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	say := func(format string, a ...any) {
		if verbose {
			fmt.Fprintf(s.Stderr, format+"\n", a...)
		}
	}
	enforce, idx, err := parseCheckIndex(checkIndex)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error parsing check-index value %q: %v\n", checkIndex, err)
		return 1
	}
	if force && enforce {
		fmt.Fprintln(s.Stderr, "The -force and -check-index flags can not be used together")
		return 1
	}
	if af.namespace == "*" {
		fmt.Fprintln(s.Stderr, errWildcardNamespaceNotAllowed)
		return 1
	}
	if out == "" {
		out = map[bool]string{true: "none", false: "json"}[isTerminal(s.Stdout)]
	}
	if err := checkVarOutFormat(out, tmpl, []string{"go-template", "hcl", "json", "none", "table"}, errInvalidOutFormat); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if in != "hcl" && in != "json" {
		fmt.Fprintln(s.Stderr, errInvalidInFormat)
		return 1
	}
	rest := fs.Args()
	isRef := func(a string) bool { return a == "-" || strings.HasPrefix(a, "@") }
	switch {
	case len(rest) < 1:
		fmt.Fprintf(s.Stderr, "Not enough arguments (expected >1, got %d)\n", len(rest))
		return 1
	case len(rest) == 1 && !isRef(rest[0]):
		fmt.Fprintln(s.Stderr, "Must supply data")
		return 1
	}

	// The spec, from stdin or a file, given first or after the path.
	var path string
	var spec *api.Variable
	readSpec := func(ref string) error {
		format := in
		var raw []byte
		var err error
		if ref == "-" {
			say("Reading whole %s variable specification from stdin", strings.ToUpper(format))
			raw, err = io.ReadAll(s.Stdin)
		} else {
			file := strings.TrimPrefix(ref, "@")
			switch filepath.Ext(file) {
			case ".hcl", ".nomad":
				format = "hcl"
			case ".json":
				format = "json"
			}
			say("Reading whole %s variable specification from %q", strings.ToUpper(format), file)
			raw, err = os.ReadFile(file)
		}
		if err != nil {
			return fmt.Errorf("Error reading %q: %s", ref, err)
		}
		if spec, err = parseVarSpec(raw, format); err != nil {
			return fmt.Errorf("Failed to parse variable data: %s", err)
		}
		return nil
	}
	if isRef(rest[0]) {
		if err := readSpec(rest[0]); err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		path = spec.Path
		rest = rest[1:]
	} else {
		path, rest = rest[0], rest[1:]
		if len(rest) > 0 && isRef(rest[0]) {
			if err := readSpec(rest[0]); err != nil {
				fmt.Fprintln(s.Stderr, err)
				return 1
			}
			rest = rest[1:]
		}
	}
	if spec == nil {
		spec = &api.Variable{}
	}
	spec.Path = path
	if spec.Path == "" {
		fmt.Fprintln(s.Stderr, "The variable specification gives no path")
		return 1
	}
	if af.namespace != "" || spec.Namespace == "" {
		spec.Namespace = af.namespace
	}
	if spec.Items == nil {
		spec.Items = api.VariableItems{}
	}
	for _, kv := range rest {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(s.Stderr, "Failed to parse K=V data: %q is not key=value\n", kv)
			return 1
		}
		switch {
		case v == "":
			if _, had := spec.Items[k]; had {
				say("Removed item %q", k)
			} else {
				say("Item %q does not exist, continuing...", k)
			}
			delete(spec.Items, k)
			continue
		case v == "-":
			raw, err := io.ReadAll(s.Stdin)
			if err != nil {
				fmt.Fprintf(s.Stderr, "Error reading from stdin: %s\n", err)
				return 1
			}
			v = string(raw)
		case strings.HasPrefix(v, "@"):
			raw, err := os.ReadFile(v[1:])
			if err != nil {
				fmt.Fprintf(s.Stderr, "Failed to parse K=V data: error reading %q: %s\n", v[1:], err)
				return 1
			}
			v = string(raw)
		}
		spec.Items[k] = v
	}

	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	if enforce {
		spec.ModifyIndex = idx
	}
	var written *api.Variable
	if force {
		written, _, err = client.Variables().Update(spec, nil)
	} else {
		written, _, err = client.Variables().CheckedUpdate(spec, nil)
	}
	if err != nil {
		if reportCASConflict(s.Stderr, err) {
			return 1
		}
		fmt.Fprintf(s.Stderr, "Error creating variable: %s\n", err)
		return 1
	}
	msg := fmt.Sprintf("Created variable %q with modify index %v", written.Path, written.ModifyIndex)
	if out == "none" {
		fmt.Fprintln(s.Stdout, msg)
		return 0
	}
	say("%s", msg)
	return renderVar(s, written, out, tmpl)
}

// parseVarSpec reads a variable specification: api.Variable JSON, or the
// HCL that `var get -out hcl` writes (path, namespace, items and the
// server-set fields, of which modify_index is the check-and-set index).
func parseVarSpec(raw []byte, format string) (*api.Variable, error) {
	if format == "json" {
		var v api.Variable
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("error unmarshaling json: %w", err)
		}
		return &v, nil
	}
	file, diags := hclsyntax.ParseConfig(raw, "variable.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("error parsing hcl: %w", diags)
	}
	attrs, diags := file.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, fmt.Errorf("error parsing hcl: %w", diags)
	}
	v := &api.Variable{Items: api.VariableItems{}}
	for name, attr := range attrs {
		val, diags := attr.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, fmt.Errorf("error parsing hcl: %w", diags)
		}
		switch name {
		case "path", "namespace":
			if val.Type() != cty.String {
				return nil, fmt.Errorf("%s must be a string", name)
			}
			if name == "path" {
				v.Path = val.AsString()
			} else {
				v.Namespace = val.AsString()
			}
		case "modify_index":
			if val.Type() != cty.Number {
				return nil, errors.New("modify_index must be a number")
			}
			n, _ := val.AsBigFloat().Uint64()
			v.ModifyIndex = n
		case "create_index", "create_time", "modify_time":
			// Set by the server; a specification may carry them.
		case "items":
			if !val.CanIterateElements() {
				return nil, errors.New(`items must be a map of strings, for example items = { key = "value" }`)
			}
			for it := val.ElementIterator(); it.Next(); {
				k, e := it.Element()
				if e.Type() != cty.String {
					return nil, fmt.Errorf("item %q must be a string", k.AsString())
				}
				v.Items[k.AsString()] = e.AsString()
			}
		default:
			return nil, fmt.Errorf("unexpected key %q: a variable specification has path, namespace, items and modify_index", name)
		}
	}
	return v, nil
}
