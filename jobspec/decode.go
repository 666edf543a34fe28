package jobspec

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// decoder walks HCL bodies and fills api structs through their `hcl` tags.
//
// It exists instead of gohcl because the job language needs things gohcl
// cannot do by tag alone: durations written as "10m", meta/env as either
// blocks or map attributes, free-form config blocks, constraint shorthands,
// errors that name the field, and a deterministic error order.
type decoder struct {
	ctx *hcl.EvalContext
	// json is set for HCL-JSON files, where a block and a map attribute look
	// the same, so map fields are only offered as blocks.
	json bool
	// syntaxBodies maps a block's definition offset to its native syntax
	// body, so that free-form blocks can list their nested block types.
	syntaxBodies map[int]*hclsyntax.Body
}

func newDecoder(ctx *hcl.EvalContext, file *hcl.File) *decoder {
	d := &decoder{ctx: ctx}
	if sb, ok := file.Body.(*hclsyntax.Body); ok {
		d.syntaxBodies = map[int]*hclsyntax.Body{}
		indexSyntaxBodies(sb, d.syntaxBodies)
	} else {
		d.json = true
	}
	return d
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

var (
	durationType    = reflect.TypeFor[time.Duration]()
	durationPtrType = reflect.TypeFor[*time.Duration]()
)

type fieldKind int

const (
	kindAttr fieldKind = iota
	kindBlock
	kindLabel
)

// fieldInfo is one tagged field of an api struct.
type fieldInfo struct {
	name     string
	index    int
	kind     fieldKind
	required bool
}

// structInfo is the tag layout of an api struct type.
type structInfo struct {
	fields []fieldInfo
	labels []fieldInfo
	// schemas are built once per syntax: [0] native, [1] JSON.
	schemas [2]*hcl.BodySchema
}

var structInfos sync.Map // reflect.Type -> *structInfo

func infoFor(t reflect.Type) *structInfo {
	if v, ok := structInfos.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{}
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("hcl")
		if tag == "" || tag == "-" {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		f := fieldInfo{name: name, index: i}
		switch kind {
		case "", "attr":
			f.kind = kindAttr
			f.required = t.Field(i).Type.Kind() != reflect.Pointer
		case "optional":
			f.kind = kindAttr
		case "block":
			f.kind = kindBlock
		case "label":
			f.kind = kindLabel
			info.labels = append(info.labels, f)
			continue
		default:
			continue
		}
		info.fields = append(info.fields, f)
	}
	info.schemas[0] = info.buildSchema(t, false)
	info.schemas[1] = info.buildSchema(t, true)
	v, _ := structInfos.LoadOrStore(t, info)
	return v.(*structInfo)
}

func (info *structInfo) buildSchema(t reflect.Type, json bool) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, f := range info.fields {
		ft := t.Field(f.index).Type
		switch f.kind {
		case kindAttr:
			s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f.name, Required: f.required})
		case kindBlock:
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.name, LabelNames: blockLabelNames(ft)})
			if !json && isAttrMap(ft) {
				s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f.name})
			}
		}
	}
	return s
}

// isAttrMap reports whether a block field is a plain map, which may also be
// written as a map attribute (meta = { ... }).
func isAttrMap(t reflect.Type) bool {
	return t.Kind() == reflect.Map && structElem(t.Elem()) == nil
}

// structElem returns the struct type behind t (T, *T, []T, []*T), or nil.
func structElem(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

func blockLabelNames(t reflect.Type) []string {
	if t.Kind() == reflect.Map {
		t = t.Elem()
	}
	st := structElem(t)
	if st == nil {
		return nil
	}
	// Read the tags directly rather than through infoFor, so that building
	// one schema never recurses through the whole type graph.
	var names []string
	for i := range st.NumField() {
		name, kind, _ := strings.Cut(st.Field(i).Tag.Get("hcl"), ",")
		if kind != "label" {
			continue
		}
		if name == "" {
			name = "name"
		}
		names = append(names, name)
	}
	return names
}

// customStruct decodes struct types whose syntax does not follow their tags.
var customStruct = map[reflect.Type]func(d *decoder, body hcl.Body, rv reflect.Value) hcl.Diagnostics{}

func init() {
	customStruct[reflect.TypeFor[constraintT]()] = decodeConstraint
	customStruct[reflect.TypeFor[affinityT]()] = decodeAffinity
}

func reflectValue(ptr any) reflect.Value {
	return reflect.ValueOf(ptr).Elem()
}

// decodeStruct fills the struct rv from body.
func (d *decoder) decodeStruct(body hcl.Body, rv reflect.Value) hcl.Diagnostics {
	if fn, ok := customStruct[rv.Type()]; ok {
		return fn(d, body, rv)
	}
	_, diags := d.decodeStructContent(body, rv, nil)
	return diags
}

// decodeStructContent fills the struct rv from body. extra names further
// blocks the caller handles itself; they are returned in the content.
func (d *decoder) decodeStructContent(body hcl.Body, rv reflect.Value, extra []hcl.BlockHeaderSchema) (*hcl.BodyContent, hcl.Diagnostics) {
	info := infoFor(rv.Type())
	schema := info.schemas[0]
	if d.json {
		schema = info.schemas[1]
	}
	if len(extra) > 0 {
		s := *schema
		s.Blocks = append(append([]hcl.BlockHeaderSchema(nil), schema.Blocks...), extra...)
		schema = &s
	}
	content, diags := body.Content(schema)
	if content == nil {
		return nil, diags
	}
	byType := content.Blocks.ByType()
	for _, f := range info.fields {
		fv := rv.Field(f.index)
		switch f.kind {
		case kindAttr:
			if a := content.Attributes[f.name]; a != nil {
				diags = append(diags, d.decodeAttr(f.name, a.Expr, fv)...)
			}
		case kindBlock:
			if a := content.Attributes[f.name]; a != nil {
				diags = append(diags, d.decodeAttr(f.name, a.Expr, fv)...)
			}
			if blocks := byType[f.name]; len(blocks) > 0 {
				diags = append(diags, d.decodeBlocks(f.name, blocks, fv)...)
			}
		}
	}
	return content, diags
}

// decodeBlockInto decodes one block, labels included, into the struct rv.
func (d *decoder) decodeBlockInto(b *hcl.Block, rv reflect.Value) hcl.Diagnostics {
	diags := d.decodeStruct(b.Body, rv)
	labels := infoFor(rv.Type()).labels
	for i, l := range labels {
		if i >= len(b.Labels) {
			break
		}
		fv := rv.Field(l.index)
		label := b.Labels[i]
		if fv.Kind() == reflect.Pointer {
			fv.Set(reflect.ValueOf(&label))
		} else {
			fv.SetString(label)
		}
	}
	return diags
}

// decodeBlocks decodes all blocks of one type into the field fv.
func (d *decoder) decodeBlocks(name string, blocks hcl.Blocks, fv reflect.Value) hcl.Diagnostics {
	t := fv.Type()
	switch {
	case t.Kind() == reflect.Map && structElem(t.Elem()) != nil:
		return d.decodeLabeledMap(blocks, fv)
	case t.Kind() == reflect.Map:
		var diags hcl.Diagnostics
		for _, b := range blocks {
			diags = append(diags, d.decodeMapBlock(b, fv)...)
		}
		return diags
	case t.Kind() == reflect.Slice:
		var diags hcl.Diagnostics
		elem := t.Elem()
		for _, b := range blocks {
			ev := reflect.New(structElem(elem))
			diags = append(diags, d.decodeBlockInto(b, ev.Elem())...)
			if elem.Kind() != reflect.Pointer {
				ev = ev.Elem()
			}
			fv.Set(reflect.Append(fv, ev))
		}
		return diags
	}

	if len(blocks) > 1 {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Duplicate %s block", name),
			Detail:   fmt.Sprintf("Only one %s block is allowed here; another was defined at %s.", name, blocks[0].DefRange),
			Subject:  blocks[1].DefRange.Ptr(),
		}}
	}
	if t.Kind() == reflect.Pointer {
		if fv.IsNil() {
			fv.Set(reflect.New(t.Elem()))
		}
		return d.decodeBlockInto(blocks[0], fv.Elem())
	}
	return d.decodeBlockInto(blocks[0], fv)
}

// decodeLabeledMap decodes labeled blocks into map[label]*T.
func (d *decoder) decodeLabeledMap(blocks hcl.Blocks, fv reflect.Value) hcl.Diagnostics {
	t := fv.Type()
	if fv.IsNil() {
		fv.Set(reflect.MakeMap(t))
	}
	var diags hcl.Diagnostics
	first := map[string]*hcl.Block{}
	for _, b := range blocks {
		// The schema gives every block of a labeled map its label.
		label := b.Labels[0]
		if prev := first[label]; prev != nil {
			// A map keeps one block per label: the second would silently
			// replace the first.
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s block %q", b.Type, label),
				Detail:   fmt.Sprintf("Only one %s block may be labeled %q; another was defined at %s.", b.Type, label, prev.DefRange),
				Subject:  b.DefRange.Ptr(),
			})
			continue
		}
		first[label] = b
		ev := reflect.New(structElem(t.Elem()))
		diags = append(diags, d.decodeBlockInto(b, ev.Elem())...)
		if t.Elem().Kind() != reflect.Pointer {
			ev = ev.Elem()
		}
		fv.SetMapIndex(reflect.ValueOf(label), ev)
	}
	return diags
}

// decodeMapBlock decodes a block whose attributes are the entries of a map
// field (meta, env, config, ...), merging into what is already there.
func (d *decoder) decodeMapBlock(b *hcl.Block, fv reflect.Value) hcl.Diagnostics {
	t := fv.Type()
	if t.Elem().Kind() == reflect.Interface {
		m, diags := d.decodeFreeform(b.Body, b.DefRange)
		if fv.IsNil() {
			fv.Set(reflect.MakeMap(t))
		}
		for k, v := range m {
			fv.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(&v).Elem())
		}
		return diags
	}

	attrs, diags := b.Body.JustAttributes()
	if fv.IsNil() {
		fv.Set(reflect.MakeMap(t))
	}
	for _, a := range sortedAttrs(attrs) {
		ev := reflect.New(t.Elem()).Elem()
		ds := d.decodeAttr(a.Name, a.Expr, ev)
		diags = append(diags, ds...)
		if !ds.HasErrors() {
			fv.SetMapIndex(reflect.ValueOf(a.Name), ev)
		}
	}
	return diags
}

// decodeAttr evaluates expr and stores it in fv. name is the attribute name
// used in error messages.
func (d *decoder) decodeAttr(name string, expr hcl.Expression, fv reflect.Value) hcl.Diagnostics {
	switch fv.Type() {
	case durationType, durationPtrType:
		return d.decodeDuration(name, expr, fv)
	}
	if fv.Kind() == reflect.Map && fv.Type().Elem().Kind() == reflect.Interface {
		return d.decodeFreeformAttr(name, expr, fv)
	}

	val, diags := expr.Value(d.ctx)
	if diags.HasErrors() || val.IsNull() {
		return diags
	}
	ty, err := gocty.ImpliedType(fv.Addr().Interface())
	if err != nil {
		return append(diags, valueDiag(name, expr, err))
	}
	conv, err := convert.Convert(val, ty)
	if err != nil {
		return append(diags, valueDiag(name, expr, err))
	}
	if fv.Kind() == reflect.Map && !fv.IsNil() {
		// A map attribute merges with a block of the same name.
		tmp := reflect.New(fv.Type())
		if err := gocty.FromCtyValue(conv, tmp.Interface()); err != nil {
			return append(diags, valueDiag(name, expr, err))
		}
		iter := tmp.Elem().MapRange()
		for iter.Next() {
			fv.SetMapIndex(iter.Key(), iter.Value())
		}
		return diags
	}
	if err := gocty.FromCtyValue(conv, fv.Addr().Interface()); err != nil {
		return append(diags, valueDiag(name, expr, err))
	}
	return diags
}

// valueDiag reports a value that does not fit its field.
func valueDiag(name string, expr hcl.Expression, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Unsuitable value type",
		Detail:   fmt.Sprintf("%s: %s", name, err),
		Subject:  expr.Range().Ptr(),
	}
}

// sortedAttrs returns attrs in source order.
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Range.Start.Byte != out[j].Range.Start.Byte {
			return out[i].Range.Start.Byte < out[j].Range.Start.Byte
		}
		return out[i].Name < out[j].Name
	})
	return out
}
