// Package jobspec parses HCL2 (and HCL-JSON) job files into *api.Job values.
//
// The parser decodes straight into the structs of
// github.com/hashicorp/nomad/api with gohcl, following their `hcl:"..."`
// tags. It
// resolves variables, locals and functions, expands dynamic blocks and keeps
// references it cannot resolve (such as ${attr.kernel.name} or
// ${NOMAD_ALLOC_ID}) as literal text for the client to interpolate. It does
// not canonicalize the job: defaults are the server's business.
//
// Errors are hcl.Diagnostics; each one names the file position and, for
// values, the field it belongs to.
package jobspec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/hashicorp/nomad/api"
	"github.com/zclconf/go-cty/cty"
)

// ParseConfig says what to parse and with which variables.
type ParseConfig struct {
	// Path is the file name used in error positions. It also anchors
	// relative paths given to filesystem functions.
	Path string
	// Body is the file content; if nil it is read from Path.
	Body []byte
	// ArgVars are -var "k=v" values; a later one wins.
	ArgVars []string
	// VarFiles are -var-file paths, HCL or JSON by content or extension.
	VarFiles []string
	// Envs is the environment as os.Environ(); NOMAD_VAR_<name> values are
	// read from it.
	Envs []string
	// AllowFS enables file(), fileexists() and the other filesystem
	// functions.
	AllowFS bool
	// Strict makes values given for undeclared variables (with -var or
	// -var-file) an error; otherwise they are ignored.
	Strict bool
}

// Parse parses the job file read from r. path names the file in errors and
// anchors filesystem functions. It is strict, allows filesystem functions and
// reads NOMAD_VAR_ values from the process environment.
func Parse(path string, r io.Reader) (*api.Job, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read job file %q: %w", path, err)
	}
	return ParseWithConfig(&ParseConfig{
		Path:    path,
		Body:    body,
		Envs:    os.Environ(),
		AllowFS: true,
		Strict:  true,
	})
}

// ParseWithConfig parses the job described by cfg. A returned error that
// comes from the job or variable files is an hcl.Diagnostics.
func ParseWithConfig(cfg *ParseConfig) (*api.Job, error) {
	res, err := ParseResult(cfg)
	if err != nil {
		return nil, err
	}
	return res.Job, nil
}

// parser holds the state of one ParseWithConfig call.
type parser struct {
	cfg  *ParseConfig
	file *hcl.File
	// warnings receives the groups' max_run_duration_warning blocks.
	warnings *warningSink
}

// topSchema is the schema of a job file's outermost body.
var topSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "variables"},
		{Type: "locals"},
		{Type: "job", LabelNames: []string{"id"}},
	},
}

func (p *parser) parse() (*api.Job, hcl.Diagnostics) {
	content, diags := p.file.Body.Content(topSchema)
	if diags.HasErrors() {
		return nil, diags
	}

	var jobs, varBlocks, varsBlocks, localBlocks []*hcl.Block
	for _, b := range content.Blocks {
		switch b.Type {
		case "job":
			jobs = append(jobs, b)
		case "variable":
			varBlocks = append(varBlocks, b)
		case "variables":
			varsBlocks = append(varsBlocks, b)
		case "locals":
			localBlocks = append(localBlocks, b)
		}
	}
	switch {
	case len(jobs) == 0:
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Missing job block",
			Detail:   "A job file must contain exactly one job block.",
			Subject:  p.file.Body.MissingItemRange().Ptr(),
		}}
	case len(jobs) > 1:
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Duplicate job block",
			Detail:   fmt.Sprintf("A job file must contain exactly one job block; another was defined at %s.", jobs[0].DefRange),
			Subject:  jobs[1].DefRange.Ptr(),
		}}
	}

	funcs := functions(p.baseDir(), p.cfg.AllowFS)

	vars, diags := p.declareVariables(varBlocks, varsBlocks, funcs)
	if diags.HasErrors() {
		return nil, diags
	}
	varVal, diags := p.resolveVariables(vars, funcs)
	if diags.HasErrors() {
		return nil, diags
	}
	localVal, diags := evalLocals(localBlocks, varVal, funcs)
	if diags.HasErrors() {
		return nil, diags
	}

	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":   varVal,
			"local": localVal,
		},
		Functions:         funcs,
		UndefinedVariable: keepForClient,
	}
	return decodeJob(jobs[0], ctx, p.file, p.warnings)
}

// baseDir is the directory filesystem functions resolve relative paths in.
func (p *parser) baseDir() string {
	if p.cfg.Path == "" {
		return "."
	}
	return filepath.Dir(p.cfg.Path)
}

// decodeJob decodes the job block into an api.Job and applies the
// parser-time normalisations.
func decodeJob(block *hcl.Block, ctx *hcl.EvalContext, file *hcl.File, warnings *warningSink) (*api.Job, hcl.Diagnostics) {
	st := newDecodeState(ctx, file)
	warnings.st = st
	body := jobBody{warningJobBody{dynblock.Expand(block.Body, ctx), warnings, ctx}, st}

	// A task written directly under job stands for a group of one.
	tasks, rest, diags := body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "task", LabelNames: []string{"name"}}},
	})
	job := &api.Job{}
	diags = append(diags, jobDecoder.DecodeBody(rest, ctx, job)...)
	for _, b := range tasks.Blocks {
		task := &api.Task{Name: b.Labels[0]}
		diags = append(diags, jobDecoder.DecodeBody(b.Body, ctx, task)...)
		name := task.Name
		job.TaskGroups = append(job.TaskGroups, &api.TaskGroup{
			Name:  &name,
			Tasks: []*api.Task{task},
		})
	}
	if diags.HasErrors() {
		return nil, sortDiags(explainUndefined(rewordDuplicates(diags), nil))
	}
	resolveFreeform(reflect.ValueOf(job))

	id := block.Labels[0]
	job.ID = &id
	if job.Name == nil {
		name := id
		job.Name = &name
	}
	diags = append(checkMaxRunDuration(block, job), warnings.check(job)...)
	if diags.HasErrors() {
		return nil, sortDiags(diags)
	}
	normalizeJob(job)
	return job, nil
}

// parseSource parses src as HCL-JSON when its first non-space character is
// '{' and as native HCL otherwise.
func parseSource(filename string, src []byte) (*hcl.File, hcl.Diagnostics) {
	json := isJSON(src)
	if diags := checkNesting(filename, src, json); diags.HasErrors() {
		return nil, diags
	}
	if json {
		return hcljson.Parse(src, filename)
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

func isJSON(src []byte) bool {
	trimmed := bytes.TrimLeft(src, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// errorsOnly drops warnings, so that the returned error reads as the first
// real problem.
func errorsOnly(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// sortDiags orders diagnostics by position so that the error text does not
// depend on decoding order.
func sortDiags(diags hcl.Diagnostics) hcl.Diagnostics {
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		switch {
		case a == nil || b == nil:
			return a != nil && b == nil
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		default:
			return a.Start.Byte < b.Start.Byte
		}
	})
	return diags
}
