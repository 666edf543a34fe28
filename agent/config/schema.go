package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// cfgDecoder decodes one agent config file, HCL or JSON, section by
// section. Each section is a schema (hcl.BodySchema) built from the keys
// nomadq implements; what the schema leaves over is sorted into Nomad
// keys nomadq ignores (a warning) and keys Nomad does not have (an error
// naming the key and its position, as Nomad refuses them too).
type cfgDecoder struct {
	src      []byte
	diags    []note
	warnings []note
}

// note is one error or warning and where in the file it points, so a
// file's messages come out in source order whatever order the sections
// were decoded in.
type note struct {
	at  int
	msg string
}

// sorted returns the messages of notes in source order.
func sorted(notes []note) []string {
	sort.SliceStable(notes, func(i, j int) bool { return notes[i].at < notes[j].at })
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.msg
	}
	return out
}

// section says how to read one block's contents.
type section struct {
	path string // for messages, e.g. "server.server_join"
	// attrs are the implemented attributes. A name that is also in
	// blocks may be written either way (meta = { ... } or meta { ... }).
	attrs  map[string]setter
	blocks map[string]blockReader
	// ignored are Nomad keys (attributes or blocks) nomadq accepts and
	// ignores with a warning.
	ignored []string
}

// setter applies one attribute's value; rng is where it was written.
type setter func(v cty.Value, rng hcl.Range)

// blockReader reads one nested block; labels are the label names its
// header carries (plugin "raw_exec" { ... } has one).
type blockReader struct {
	labels []string
	read   func(*hcl.Block)
}

// block is a blockReader for a block without labels.
func block(read func(*hcl.Block)) blockReader { return blockReader{read: read} }

func (d *cfgDecoder) err() error {
	if len(d.diags) == 0 {
		return nil
	}
	return errors.New(strings.Join(sorted(d.diags), "\n"))
}

func (d *cfgDecoder) errorf(rng hcl.Range, format string, args ...any) {
	d.diags = append(d.diags, note{rng.Start.Byte, fmt.Sprintf("%s: %s", rangeStart(rng), fmt.Sprintf(format, args...))})
}

func (d *cfgDecoder) warnf(rng hcl.Range, format string, args ...any) {
	d.warnings = append(d.warnings, note{rng.Start.Byte, fmt.Sprintf("%s: %s", rangeStart(rng), fmt.Sprintf(format, args...))})
}

// rangeStart renders where a key was written as file:line,column.
func rangeStart(rng hcl.Range) string {
	return fmt.Sprintf("%s:%d,%d", rng.Filename, rng.Start.Line, rng.Start.Column)
}

// hclDiags reports HCL's own diagnostics (a block where a value belongs,
// a missing label, a JSON value of the wrong kind) under the section's
// path.
func (d *cfgDecoder) hclDiags(path string, diags hcl.Diagnostics) {
	for _, diag := range diags {
		if diag.Severity != hcl.DiagError {
			continue
		}
		rng := hcl.Range{}
		if diag.Subject != nil {
			rng = *diag.Subject
		}
		msg := diag.Summary
		if diag.Detail != "" {
			msg += "; " + diag.Detail
		}
		if path != "" {
			msg = path + ": " + msg
		}
		d.errorf(rng, "%s", msg)
	}
}

// decode applies body to the setters and readers of s.
func (d *cfgDecoder) decode(body hcl.Body, s section) {
	// A key that may be an attribute or a block is asked for as an
	// attribute first and, among what is left, as a block: one schema
	// cannot hold both kinds under one name.
	first, second := &hcl.BodySchema{}, &hcl.BodySchema{}
	for name := range s.attrs {
		first.Attributes = append(first.Attributes, hcl.AttributeSchema{Name: name})
	}
	for name, b := range s.blocks {
		hs := hcl.BlockHeaderSchema{Type: name, LabelNames: b.labels}
		if _, both := s.attrs[name]; both {
			second.Blocks = append(second.Blocks, hs)
		} else {
			first.Blocks = append(first.Blocks, hs)
		}
	}
	content, remain, diags := body.PartialContent(first)
	if !diags.HasErrors() && len(second.Blocks) > 0 {
		more, rest, moreDiags := remain.PartialContent(second)
		content.Blocks = append(content.Blocks, more.Blocks...)
		remain, diags = rest, append(diags, moreDiags...)
	}
	if diags.HasErrors() {
		d.hclDiags(s.path, diags)
		return
	}

	attrs := make([]*hcl.Attribute, 0, len(content.Attributes))
	for _, a := range content.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Range.Start.Byte < attrs[j].Range.Start.Byte })
	for _, a := range attrs {
		v, vdiags := a.Expr.Value(nil)
		if vdiags.HasErrors() {
			d.errorf(a.Range, "%s: %s", s.key(a.Name), vdiags.Error())
			continue
		}
		if v.IsNull() {
			// null is how JSON (and HCL) say "not set".
			continue
		}
		s.attrs[a.Name](v, a.Range)
	}
	sort.SliceStable(content.Blocks, func(i, j int) bool {
		return content.Blocks[i].TypeRange.Start.Byte < content.Blocks[j].TypeRange.Start.Byte
	})
	for _, b := range content.Blocks {
		s.blocks[b.Type].read(b)
	}

	// Whatever the schema did not claim is reported by an empty schema,
	// one diagnostic per key, pointing at the key's name.
	_, extra := remain.Content(&hcl.BodySchema{})
	for _, x := range extra {
		if x.Subject == nil {
			continue
		}
		d.unknownOrIgnored(s, d.keyName(*x.Subject), *x.Subject)
	}
}

// keyName is the name written at rng: bare in HCL, quoted in JSON.
func (d *cfgDecoder) keyName(rng hcl.Range) string {
	name := string(rng.SliceBytes(d.src))
	if unq, err := strconv.Unquote(name); err == nil {
		return unq
	}
	return name
}

func (s section) key(name string) string {
	if s.path == "" {
		return name
	}
	return s.path + "." + name
}

func (d *cfgDecoder) unknownOrIgnored(s section, name string, rng hcl.Range) {
	for _, ig := range s.ignored {
		if ig == name {
			d.warnf(rng, "config key %q is not implemented by nomadq and is ignored", s.key(name))
			return
		}
	}
	d.errorf(rng, "unknown config key %q", s.key(name))
}

// justAttributes returns a block's attributes when the block holds
// name = value pairs (meta, options, a plugin's config), in source
// order. HCL can nest blocks there, JSON cannot tell a nested block from
// an object value; each nested HCL block goes to nested.
func (d *cfgDecoder) justAttributes(path string, body hcl.Body, nested func(*hclsyntax.Block)) []*hcl.Attribute {
	attrs, diags := body.JustAttributes()
	if sb, ok := body.(*hclsyntax.Body); ok {
		// hclsyntax's only complaint is the first nested block; every
		// one of them is reported through nested instead.
		diags = nil
		for _, b := range sb.Blocks {
			nested(b)
		}
	}
	d.hclDiags(path, diags)
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}
