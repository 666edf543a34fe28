package jobspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// A group's max_run_duration_warning block has no field in the api
// module's TaskGroup, so gohcl cannot decode it into the job. The job body
// is wrapped (warningJobBody) so that each group body hands the block to a
// warningSink instead of to gohcl; ParseResult returns the decoded blocks
// beside the api.Job, keyed by group name, and InjectMaxRunWarnings writes
// them into the job's JSON.

// Result is a parsed job with what the api module's Job cannot carry.
type Result struct {
	Job *api.Job
	// MaxRunWarnings are the groups' max_run_duration_warning blocks, by
	// group name; nil when no group has one.
	MaxRunWarnings map[string]*structs.MaxRunDurationWarning
}

// ParseResult parses the job described by cfg as ParseWithConfig does and
// also returns the groups' max_run_duration_warning blocks.
func ParseResult(cfg *ParseConfig) (*Result, error) {
	if cfg == nil {
		return nil, fmt.Errorf("parse job: nil config")
	}
	src := cfg.Body
	if src == nil {
		b, err := os.ReadFile(cfg.Path)
		if err != nil {
			return nil, fmt.Errorf("read job file: %w", err)
		}
		src = b
	}

	file, diags := parseSource(cfg.Path, src)
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}

	p := &parser{cfg: cfg, file: file, warnings: &warningSink{}}
	job, diags := p.parse()
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}
	res := &Result{Job: job}
	for _, w := range p.warnings.blocks {
		if res.MaxRunWarnings == nil {
			res.MaxRunWarnings = map[string]*structs.MaxRunDurationWarning{}
		}
		res.MaxRunWarnings[w.group] = w.warning
	}
	return res, nil
}

// warningSink collects the max_run_duration_warning blocks of one job.
type warningSink struct {
	st     *decodeState
	blocks []*groupWarning
}

type groupWarning struct {
	group   string
	block   *hcl.Block
	warning *structs.MaxRunDurationWarning
}

// hclWarning is the block as written.
type hclWarning struct {
	Before *time.Duration `hcl:"before"`
	Signal *string        `hcl:"signal"`
}

const warningBlock = "max_run_duration_warning"

// take decodes the group's warning blocks out of content. A group body
// read twice records its block once.
func (s *warningSink) take(group string, content *hcl.BodyContent, ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	kept := content.Blocks[:0]
	var found []*hcl.Block
	for _, b := range content.Blocks {
		if b.Type == warningBlock {
			found = append(found, b)
			continue
		}
		kept = append(kept, b)
	}
	content.Blocks = kept
	if len(found) == 0 {
		return nil
	}
	for _, g := range s.blocks {
		if g.group == group {
			return nil
		}
	}
	if len(found) > 1 {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Duplicate max_run_duration_warning block",
			Detail:   fmt.Sprintf("Task group %q: only one max_run_duration_warning block is allowed; another was defined at %s.", group, found[0].DefRange),
			Subject:  found[1].DefRange.Ptr(),
		}}
	}
	var w hclWarning
	diags = append(diags, jobDecoder.DecodeBody(jobBody{found[0].Body, s.st}, ctx, &w)...)
	if diags.HasErrors() {
		return diags
	}
	out := &structs.MaxRunDurationWarning{Signal: *w.Signal}
	if w.Before != nil {
		out.Before = *w.Before
	}
	s.blocks = append(s.blocks, &groupWarning{group: group, block: found[0], warning: out})
	return diags
}

// check applies the server's rules to each warning against its group's
// max_run_duration, at the block's position.
func (s *warningSink) check(job *api.Job) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, g := range s.blocks {
		tg := findGroup(job, g.group)
		if tg == nil {
			continue
		}
		if err := structs.ValidateMaxRunDurationWarning(g.warning, tg.MaxRunDuration); err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid max_run_duration_warning",
				Detail:   fmt.Sprintf("Task group %q: %s", g.group, err),
				Subject:  g.block.DefRange.Ptr(),
			})
		}
	}
	return diags
}

// warningJobBody is the job block's body: it wraps each group block's body
// in a warningGroupBody.
type warningJobBody struct {
	hcl.Body
	sink *warningSink
	ctx  *hcl.EvalContext
}

func (b warningJobBody) wrap(content *hcl.BodyContent) {
	if content == nil {
		return
	}
	for i, blk := range content.Blocks {
		if blk.Type != "group" || len(blk.Labels) == 0 {
			continue
		}
		nb := *blk
		nb.Body = warningGroupBody{blk.Body, blk.Labels[0], b.sink, b.ctx}
		content.Blocks[i] = &nb
	}
}

// Content implements hcl.Body.
func (b warningJobBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	content, diags := b.Body.Content(schema)
	b.wrap(content)
	return content, diags
}

// PartialContent implements hcl.Body.
func (b warningJobBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	content, remain, diags := b.Body.PartialContent(schema)
	b.wrap(content)
	return content, warningJobBody{remain, b.sink, b.ctx}, diags
}

// warningGroupBody is a group block's body: it reads the group's
// max_run_duration_warning block into the sink and leaves the rest to
// gohcl.
type warningGroupBody struct {
	hcl.Body
	group string
	sink  *warningSink
	ctx   *hcl.EvalContext
}

func withWarningBlock(schema *hcl.BodySchema) *hcl.BodySchema {
	s := *schema
	s.Blocks = append(append([]hcl.BlockHeaderSchema(nil), schema.Blocks...), hcl.BlockHeaderSchema{Type: warningBlock})
	return &s
}

// Content implements hcl.Body.
func (b warningGroupBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	content, diags := b.Body.Content(withWarningBlock(schema))
	if content != nil {
		diags = append(diags, b.sink.take(b.group, content, b.ctx)...)
	}
	return content, diags
}

// PartialContent implements hcl.Body.
func (b warningGroupBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	content, remain, diags := b.Body.PartialContent(withWarningBlock(schema))
	if content != nil {
		diags = append(diags, b.sink.take(b.group, content, b.ctx)...)
	}
	return content, remain, diags
}

// InjectMaxRunWarnings adds TaskGroups[].MaxRunDurationWarning {Before
// (ns), Signal} to body, the json.Marshal output of a value holding the
// job's groups (the job, {"Job": job} or a register or plan request), for
// each group of groups named in warnings. It finds each group by its own
// json.Marshal text, which the body holds verbatim, and appends the field
// to that object, so the body's key order is kept.
func InjectMaxRunWarnings(body []byte, groups []*api.TaskGroup, warnings map[string]*structs.MaxRunDurationWarning) ([]byte, error) {
	if len(warnings) == 0 {
		return body, nil
	}
	out := body
	for _, tg := range groups {
		if tg == nil || tg.Name == nil || warnings[*tg.Name] == nil {
			continue
		}
		w := warnings[*tg.Name]
		text, err := json.Marshal(tg)
		if err != nil {
			return nil, err
		}
		i := bytes.Index(out, text)
		if i < 0 || len(text) < 2 {
			return nil, fmt.Errorf("task group %q: cannot find the group in the job's JSON to add its max_run_duration_warning", *tg.Name)
		}
		field, err := json.Marshal(struct {
			Before int64
			Signal string
		}{int64(w.Before), w.Signal})
		if err != nil {
			return nil, err
		}
		end := i + len(text) - 1 // the group's closing brace
		sep := ","
		if len(text) == 2 {
			sep = ""
		}
		var b bytes.Buffer
		b.Write(out[:end])
		b.WriteString(sep + `"MaxRunDurationWarning":`)
		b.Write(field)
		b.Write(out[end:])
		out = b.Bytes()
	}
	return out, nil
}
