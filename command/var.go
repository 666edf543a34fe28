package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/hashicorp/nomad/api"
)

func init() {
	commands["var get"] = commandInfo{runVarGet, "Read a variable"}
	commands["var put"] = commandInfo{runVarPut, "Create or update a variable"}
	commands["var list"] = commandInfo{runVarList, "List variable metadata"}
	commands["var purge"] = commandInfo{runVarPurge, "Purge a variable"}
}

// Messages of the var commands, as Nomad's CLI words them.
const (
	errMissingTemplate             = `A template must be supplied using '-template' when using go-template formatting`
	errUnexpectedTemplate          = `The '-template' flag is only valid when using 'go-template' formatting`
	errVariableNotFound            = `Variable not found`
	errNoMatchingVariables         = `No matching variables found`
	errInvalidInFormat             = `Invalid value for "-in"; valid values are [hcl, json]`
	errInvalidOutFormat            = `Invalid value for "-out"; valid values are [go-template, hcl, json, none, table]`
	errInvalidListOutFormat        = `Invalid value for "-out"; valid values are [go-template, json, table, terse]`
	errWildcardNamespaceNotAllowed = `The wildcard namespace ("*") is not valid for this command.`
)

// isTerminal reports whether w is a terminal; var commands pick their
// default output format by it, as Nomad's do.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// checkVarOutFormat validates -out and -template.
func checkVarOutFormat(out, tmpl string, allowed []string, invalid string) error {
	if out != "go-template" && tmpl != "" {
		return errors.New(errUnexpectedTemplate)
	}
	if out == "go-template" && tmpl == "" {
		return errors.New(errMissingTemplate)
	}
	for _, a := range allowed {
		if out == a {
			return nil
		}
	}
	return errors.New(invalid)
}

// parseCheckIndex reads -check-index; "" is not set.
func parseCheckIndex(s string) (bool, uint64, error) {
	if s == "" {
		return false, 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return false, 0, fmt.Errorf("Invalid -check-index value %q: out of range for uint64", s)
		}
		return false, 0, fmt.Errorf("Invalid -check-index value %q: not parsable as uint64", s)
	}
	return true, n, nil
}

func renderVarJSON(v *api.Variable) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// renderVarHCL writes a variable as a specification `var put` reads back.
func renderVarHCL(v *api.Variable) string {
	var b strings.Builder
	fmt.Fprintf(&b, "namespace    = %q\n", v.Namespace)
	fmt.Fprintf(&b, "path         = %q\n", v.Path)
	fmt.Fprintf(&b, "create_index = %d  # Set by server\n", v.CreateIndex)
	fmt.Fprintf(&b, "modify_index = %d  # Set by server; consulted for check-and-set\n", v.ModifyIndex)
	fmt.Fprintf(&b, "create_time  = %d   # Set by server\n", v.CreateTime)
	fmt.Fprintf(&b, "modify_time  = %d   # Set by server\n", v.ModifyTime)
	b.WriteString("\nitems = {\n")
	pad := 0
	for k := range v.Items {
		pad = max(pad, len(k))
	}
	for _, k := range sortedKeys(v.Items) {
		fmt.Fprintf(&b, "  %-*s = %q\n", pad, k, v.Items[k])
	}
	b.WriteString("}")
	return b.String()
}

func renderVarTemplate(obj any, tmpl string) (string, error) {
	t, err := template.New("var").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("Error parsing template: %w", err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, obj); err != nil {
		return "", fmt.Errorf("Error executing template: %w", err)
	}
	return out.String(), nil
}

func renderVarTable(v *api.Variable) string {
	meta := []string{
		"Namespace|" + v.Namespace,
		"Path|" + v.Path,
		"Create Time|" + formatUnixNano(v.CreateTime),
	}
	if v.CreateTime != v.ModifyTime {
		meta = append(meta, "Modify Time|"+formatUnixNano(v.ModifyTime))
	}
	meta = append(meta, fmt.Sprintf("Check Index|%d", v.ModifyIndex))
	items := make([]string, 0, len(v.Items))
	for _, k := range sortedKeys(v.Items) {
		items = append(items, k+"|"+v.Items[k])
	}
	return formatKV(meta) + "\n\nItems\n" + formatKV(items)
}

// renderVar writes v in the -out format; "none" writes nothing.
func renderVar(s Streams, v *api.Variable, out, tmpl string) int {
	switch out {
	case "json":
		fmt.Fprintln(s.Stdout, renderVarJSON(v))
	case "hcl":
		fmt.Fprintln(s.Stdout, renderVarHCL(v))
	case "go-template":
		text, err := renderVarTemplate(v, tmpl)
		if err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		fmt.Fprintln(s.Stdout, text)
	case "table":
		fmt.Fprintln(s.Stdout, renderVarTable(v))
	}
	return 0
}

// reportCASConflict explains a check-and-set conflict, as Nomad's CLI
// does; it reports false for any other error.
func reportCASConflict(w io.Writer, err error) bool {
	var cas api.ErrCASConflict
	if !errors.As(err, &cas) {
		return false
	}
	fmt.Fprint(w, "\nCheck-and-Set conflict\n\n")
	fmt.Fprintf(w, "    Your provided check-index (%d) does not match the server-side index (%d).\n", cas.CheckIndex, cas.Conflict.ModifyIndex)
	if cas.Conflict.ModifyIndex > 0 {
		fmt.Fprintf(w, "    The server-side item was last updated on %s.\n", formatUnixNano(cas.Conflict.ModifyTime))
	}
	fmt.Fprintf(w, "    If you are sure you want to perform this operation, add the -force or -check-index=%d flag before the positional arguments.\n", cas.Conflict.ModifyIndex)
	return true
}

const varGetUsage = `
Usage: nomad var get [options] <path>

  The 'var get' command is used to get the contents of an existing variable.

  -item <item key>
     Print only the value of the given item, without a trailing newline.

  -out ( go-template | hcl | json | none | table )
     Format to render the variable in. Defaults to "table" when stdout is a
     terminal and to "json" when stdout is redirected.

  -template
     Template to render output with. Required when output is "go-template".
`

func runVarGet(args []string, s Streams) int {
	var af apiFlags
	var item, out, tmpl string
	fs := newFlagSet("var get", s.Stderr, varGetUsage)
	af.register(fs)
	fs.StringVar(&item, "item", "", "Print only the value of the given item")
	fs.StringVar(&out, "out", "", "Format to render the variable in")
	fs.StringVar(&tmpl, "template", "", "Template to render output with")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <path>")
		return 1
	}
	if out == "" {
		out = map[bool]string{true: "table", false: "json"}[isTerminal(s.Stdout)]
	}
	if err := checkVarOutFormat(out, tmpl, []string{"go-template", "hcl", "json", "none", "table"}, errInvalidOutFormat); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if af.namespace == "*" {
		fmt.Fprintln(s.Stderr, errWildcardNamespaceNotAllowed)
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	v, _, err := client.Variables().Read(fs.Arg(0), nil)
	if errors.Is(err, api.ErrVariablePathNotFound) {
		fmt.Fprintln(s.Stderr, errVariableNotFound)
		return 1
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving variable: %s\n", err)
		return 1
	}
	if item != "" {
		val, ok := v.Items[item]
		if !ok {
			fmt.Fprintf(s.Stderr, "Variable does not contain %q item\n", item)
			return 1
		}
		fmt.Fprint(s.Stdout, val)
		return 0
	}
	return renderVar(s, v, out, tmpl)
}

const varListUsage = `
Usage: nomad var list [options] <prefix>

  List is used to list available variables. Supplying an optional prefix
  filters the list to variables having a path starting with the prefix.
  With -namespace '*' it lists the variables of every namespace.

  -per-page
     How many results to show per page.

  -page-token
     Where to start pagination.

  -filter
     Specifies an expression used to filter query results.

  -out (go-template | json | table | terse )
     Format to render results in. Defaults to "table" when stdout is a
     terminal and to "json" when stdout is redirected.

  -template
     Template to render output with. Required when format is "go-template".
`

func runVarList(args []string, s Streams) int {
	var af apiFlags
	var out, tmpl, pageToken, filter string
	var perPage int
	fs := newFlagSet("var list", s.Stderr, varListUsage)
	af.register(fs)
	fs.StringVar(&out, "out", "", "Format to render results in")
	fs.StringVar(&tmpl, "template", "", "Template to render output with")
	fs.IntVar(&perPage, "per-page", 0, "How many results to show per page")
	fs.StringVar(&pageToken, "page-token", "", "Where to start pagination")
	fs.StringVar(&filter, "filter", "", "Expression to filter results by")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(s.Stderr, "This command takes flags and either no arguments or one: <prefix>")
		return 1
	}
	if out == "" {
		out = map[bool]string{true: "table", false: "json"}[isTerminal(s.Stdout)]
	}
	if err := checkVarOutFormat(out, tmpl, []string{"go-template", "json", "table", "terse"}, errInvalidListOutFormat); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	qo := &api.QueryOptions{Filter: filter, PerPage: int32(perPage), NextToken: pageToken}
	vars, qm, err := client.Variables().PrefixList(fs.Arg(0), qo)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error retrieving vars: %s\n", err)
		return 1
	}
	switch out {
	case "json":
		var obj any = vars
		if perPage > 0 {
			obj = struct {
				Data      any
				QueryMeta *api.QueryMeta
			}{vars, qm}
		}
		b, _ := json.MarshalIndent(obj, "", "    ")
		fmt.Fprintln(s.Stdout, string(b))
		return 0
	case "terse":
		rows := make([]string, 0, len(vars))
		for _, v := range vars {
			if af.namespace == "*" {
				rows = append(rows, v.Namespace+"|"+v.Path)
			} else {
				rows = append(rows, v.Path)
			}
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
	case "go-template":
		text, err := renderVarTemplate(vars, tmpl)
		if err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		fmt.Fprintln(s.Stdout, text)
	default:
		fmt.Fprintln(s.Stdout, formatVarStubs(vars))
	}
	if qm.NextToken != "" {
		fmt.Fprintf(s.Stderr, "Next page token: %s\n", qm.NextToken)
	}
	return 0
}

func formatVarStubs(vars []*api.VariableMetadata) string {
	if len(vars) == 0 {
		return errNoMatchingVariables
	}
	sort.Slice(vars, func(i, j int) bool {
		if vars[i].Namespace == vars[j].Namespace {
			return vars[i].Path < vars[j].Path
		}
		return vars[i].Namespace < vars[j].Namespace
	})
	rows := []string{"Namespace|Path|Last Updated"}
	for _, v := range vars {
		rows = append(rows, v.Namespace+"|"+v.Path+"|"+formatUnixNano(v.ModifyTime))
	}
	return formatList(rows)
}

const varPurgeUsage = `
Usage: nomad var purge [options] <path>

  Purge is used to permanently delete an existing variable.

  -check-index
     If set, the variable is only purged if the server-side version's index
     matches the provided value.
`

func runVarPurge(args []string, s Streams) int {
	var af apiFlags
	var checkIndex string
	fs := newFlagSet("var purge", s.Stderr, varPurgeUsage)
	af.register(fs)
	fs.StringVar(&checkIndex, "check-index", "", "Purge only if the server-side index matches")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <path>")
		return 1
	}
	enforce, idx, err := parseCheckIndex(checkIndex)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if af.namespace == "*" {
		fmt.Fprintln(s.Stderr, errWildcardNamespaceNotAllowed)
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing client: %s\n", err)
		return 1
	}
	path := fs.Arg(0)
	if enforce {
		_, err = client.Variables().CheckedDelete(path, idx, nil)
	} else {
		_, err = client.Variables().Delete(path, nil)
	}
	if err != nil {
		if reportCASConflict(s.Stderr, err) {
			return 1
		}
		fmt.Fprintf(s.Stderr, "Error purging variable: %s\n", err)
		return 1
	}
	fmt.Fprintf(s.Stdout, "Successfully purged variable %q!\n", path)
	return 0
}
