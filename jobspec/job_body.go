package jobspec

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// decodeState is what the bodies of one job file share while gohcl decodes
// them.
type decodeState struct {
	ctx *hcl.EvalContext
	// json is set for HCL-JSON files, where a block and a map argument look
	// the same, so map fields are only offered as blocks.
	json bool
	// syntaxBodies maps a block's definition offset to its native syntax
	// body, so that free-form blocks can list their nested block types.
	syntaxBodies map[int]*hclsyntax.Body
}

func newDecodeState(ctx *hcl.EvalContext, file *hcl.File) *decodeState {
	st := &decodeState{ctx: ctx}
	if sb, ok := file.Body.(*hclsyntax.Body); ok {
		st.syntaxBodies = map[int]*hclsyntax.Body{}
		indexSyntaxBodies(sb, st.syntaxBodies)
	} else {
		st.json = true
	}
	return st
}

// indexSyntaxBodies records every block body under b by the start of its
// definition. A dynamic block is recorded as its content body, because the
// blocks dynblock generates carry the dynamic block's definition range.
func indexSyntaxBodies(b *hclsyntax.Body, idx map[int]*hclsyntax.Body) {
	for _, blk := range b.Blocks {
		body := blk.Body
		if blk.Type == "dynamic" {
			for _, inner := range blk.Body.Blocks {
				if inner.Type == "content" {
					body = inner.Body
				}
			}
		}
		idx[blk.DefRange().Start.Byte] = body
		indexSyntaxBodies(blk.Body, idx)
	}
}

// jobBody is a job file body as gohcl reads it. Between the file and gohcl
// it names every argument's expression (for decodeValue's errors), merges a
// map field's argument and blocks into the one block gohcl expects, and
// refuses a label used twice in a labeled map, which gohcl would overwrite.
type jobBody struct {
	hcl.Body
	st *decodeState
}

// Content implements hcl.Body.
func (b jobBody) Content(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	schema, mapArgs := b.st.withMapArgs(schema)
	content, diags := b.Body.Content(schema)
	return b.st.adapt(content, mapArgs, diags)
}

// PartialContent implements hcl.Body.
func (b jobBody) PartialContent(schema *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	schema, mapArgs := b.st.withMapArgs(schema)
	content, remain, diags := b.Body.PartialContent(schema)
	content, diags = b.st.adapt(content, mapArgs, diags)
	return content, jobBody{remain, b.st}, diags
}

// JustAttributes implements hcl.Body.
func (b jobBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	attrs, diags := b.Body.JustAttributes()
	for name, a := range attrs {
		attrs[name] = namedAttr(a)
	}
	return attrs, diags
}

func namedAttr(a *hcl.Attribute) *hcl.Attribute {
	na := *a
	na.Expr = namedExpr{a.Expr, a.Name}
	return &na
}

// withMapArgs adds to schema an argument for each map block in it, so that
// `meta = { ... }` is accepted beside `meta { ... }`. It returns the names
// it added. HCL-JSON cannot tell the two forms apart and keeps the block.
func (st *decodeState) withMapArgs(schema *hcl.BodySchema) (*hcl.BodySchema, map[string]bool) {
	if st.json {
		return schema, nil
	}
	var added map[string]bool
	for _, bs := range schema.Blocks {
		if k := apiShapes.blocks[bs.Type].kind; k != blockMap && k != blockFreeform {
			continue
		}
		if slices.ContainsFunc(schema.Attributes, func(a hcl.AttributeSchema) bool { return a.Name == bs.Type }) {
			continue
		}
		if added == nil {
			added = map[string]bool{}
			s := *schema
			s.Attributes = slices.Clone(schema.Attributes)
			schema = &s
		}
		added[bs.Type] = true
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: bs.Type})
	}
	return schema, added
}

// adapt prepares content read with withMapArgs' schema for gohcl.
func (st *decodeState) adapt(content *hcl.BodyContent, mapArgs map[string]bool, diags hcl.Diagnostics) (*hcl.BodyContent, hcl.Diagnostics) {
	if content == nil {
		return nil, diags
	}
	out := &hcl.BodyContent{
		Attributes:       make(hcl.Attributes, len(content.Attributes)),
		MissingItemRange: content.MissingItemRange,
	}
	var maps []*mapBody
	mapOf := func(name string) *mapBody {
		for _, m := range maps {
			if m.name == name {
				return m
			}
		}
		m := &mapBody{name: name, shape: apiShapes.blocks[name], st: st}
		maps = append(maps, m)
		return m
	}
	for name, a := range content.Attributes {
		if mapArgs[name] {
			mapOf(name).attr = a
			continue
		}
		out.Attributes[name] = namedAttr(a)
	}

	type labeled struct{ typ, label string }
	first := map[labeled]*hcl.Block{}
	for _, blk := range content.Blocks {
		switch apiShapes.blocks[blk.Type].kind {
		case blockMap, blockFreeform:
			m := mapOf(blk.Type)
			m.blocks = append(m.blocks, blk)
			continue
		case blockLabeledMap:
			key := labeled{blk.Type, blk.Labels[0]}
			if prev := first[key]; prev != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  fmt.Sprintf("Duplicate %s block %q", key.typ, key.label),
					Detail:   fmt.Sprintf("Only one %s block may be labeled %q; another was defined at %s.", key.typ, key.label, prev.DefRange),
					Subject:  blk.DefRange.Ptr(),
				})
				continue
			}
			first[key] = blk
		}
		nb := *blk
		nb.Body = jobBody{blk.Body, st}
		out.Blocks = append(out.Blocks, &nb)
	}
	for _, m := range maps {
		out.Blocks = append(out.Blocks, m.block())
	}
	return out, diags
}

// mapBody is the content of one map field: its map argument, then its
// blocks, merged in that order, a later key replacing an earlier one. gohcl
// reads a map field's body only through JustAttributes.
type mapBody struct {
	name   string
	shape  blockShape
	st     *decodeState
	attr   *hcl.Attribute
	blocks []*hcl.Block
}

func (m *mapBody) block() *hcl.Block {
	def := m.MissingItemRange()
	if m.attr != nil {
		def = m.attr.NameRange
	}
	return &hcl.Block{Type: m.name, Body: m, DefRange: def, TypeRange: def}
}

// Content implements hcl.Body with the map's entries as attributes.
func (m *mapBody) Content(*hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	attrs, diags := m.JustAttributes()
	return &hcl.BodyContent{Attributes: attrs, MissingItemRange: m.MissingItemRange()}, diags
}

// PartialContent implements hcl.Body with the map's entries as attributes.
func (m *mapBody) PartialContent(s *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	content, diags := m.Content(s)
	return content, hcl.EmptyBody(), diags
}

// MissingItemRange implements hcl.Body.
func (m *mapBody) MissingItemRange() hcl.Range {
	if len(m.blocks) > 0 {
		return m.blocks[0].DefRange
	}
	return m.attr.Range
}

// JustAttributes returns the map's entries with their values already
// decoded: gohcl copies plain entries through its default conversion,
// whose errors do not name the entry, and keeps map[string]any entries as
// the *hcl.Attribute itself (resolveFreeform takes the value out).
func (m *mapBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	if m.shape.kind == blockFreeform {
		return m.freeformEntries()
	}
	return m.plainEntries()
}

func (m *mapBody) plainEntries() (hcl.Attributes, hcl.Diagnostics) {
	elem := m.shape.mapType.Elem()
	elemTy, err := gocty.ImpliedType(reflect.New(elem).Interface())
	if err != nil {
		panic(fmt.Sprintf("jobspec: map block %q: %s", m.name, err))
	}
	out := hcl.Attributes{}
	var diags hcl.Diagnostics
	if a := m.attr; a != nil {
		val, ds := a.Expr.Value(m.st.ctx)
		diags = append(diags, ds...)
		if !ds.HasErrors() && !val.IsNull() {
			conv, err := convert.Convert(val, cty.Map(elemTy))
			if err == nil && !conv.IsWhollyKnown() {
				err = errNotKnown
			}
			if err != nil {
				diags = append(diags, valueDiag(m.name, a.Expr, err))
			} else {
				for it := conv.ElementIterator(); it.Next(); {
					k, v := it.Element()
					out[k.AsString()] = &hcl.Attribute{
						Name:      k.AsString(),
						Expr:      hcl.StaticExpr(v, a.Expr.Range()),
						Range:     a.Range,
						NameRange: a.NameRange,
					}
				}
			}
		}
	}
	for _, b := range m.blocks {
		attrs, ds := b.Body.JustAttributes()
		diags = append(diags, ds...)
		for _, a := range sortedAttrs(attrs) {
			val, ds := a.Expr.Value(m.st.ctx)
			diags = append(diags, ds...)
			if ds.HasErrors() {
				continue
			}
			if val.IsNull() {
				// A null entry is the element's zero value.
				val, err = gocty.ToCtyValue(reflect.Zero(elem).Interface(), elemTy)
			} else {
				val, err = convert.Convert(val, elemTy)
				if err == nil && !val.IsWhollyKnown() {
					err = errNotKnown
				}
			}
			if err != nil {
				diags = append(diags, valueDiag(a.Name, a.Expr, err))
				continue
			}
			out[a.Name] = &hcl.Attribute{
				Name:      a.Name,
				Expr:      hcl.StaticExpr(val, a.Expr.Range()),
				Range:     a.Range,
				NameRange: a.NameRange,
			}
		}
	}
	return out, diags
}

func (m *mapBody) freeformEntries() (hcl.Attributes, hcl.Diagnostics) {
	out := hcl.Attributes{}
	var diags hcl.Diagnostics
	add := func(entries map[string]any, rng hcl.Range) {
		for k, v := range entries {
			out[k] = &hcl.Attribute{
				Name:      k,
				Expr:      decodedExpr{hcl.StaticExpr(cty.DynamicVal, rng), v},
				Range:     rng,
				NameRange: rng,
			}
		}
	}
	if a := m.attr; a != nil {
		v, ds := m.st.freeformValue(m.name, a.Expr)
		diags = append(diags, ds...)
		if entries, ok := v.(map[string]any); ok {
			add(entries, a.Expr.Range())
		} else if !ds.HasErrors() && v != nil {
			diags = append(diags, valueDiag(m.name, a.Expr, fmt.Errorf("an object is required")))
		}
	}
	for _, b := range m.blocks {
		entries, ds := m.st.decodeFreeform(b.Body, b.DefRange)
		diags = append(diags, ds...)
		add(entries, b.DefRange)
	}
	return out, diags
}

// decodedExpr carries a free-form entry, already decoded to Go, through
// gohcl to resolveFreeform.
type decodedExpr struct {
	hcl.Expression
	value any
}

var freeformType = reflect.TypeFor[map[string]any]()

// resolveFreeform puts the decoded values of free-form entries in place of
// the *hcl.Attribute values gohcl stores in map[string]any fields.
func resolveFreeform(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			resolveFreeform(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				resolveFreeform(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			resolveFreeform(v.Index(i))
		}
	case reflect.Map:
		if v.Type() != freeformType {
			for it := v.MapRange(); it.Next(); {
				resolveFreeform(it.Value())
			}
			return
		}
		m := v.Interface().(map[string]any)
		for k, e := range m {
			if a, ok := e.(*hcl.Attribute); ok {
				if d, ok := a.Expr.(decodedExpr); ok {
					m[k] = d.value
				}
			}
		}
	}
}
