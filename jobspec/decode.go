package jobspec

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/nomad/api"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// jobDecoder fills api structs from job bodies through their `hcl` tags.
//
// gohcl walks the structs: schemas, blocks, labels, required arguments and
// duplicate blocks. The job language's additions are registered on it
// (durations, constraint and affinity shorthands, value errors that name
// their argument) or made by jobBody before gohcl reads a body (map
// arguments, free-form blocks, labels used twice).
var jobDecoder = newJobDecoder()

func newJobDecoder() *gohcl.Decoder {
	dec := &gohcl.Decoder{}
	for t := range apiShapes.valueTypes {
		dec.RegisterExpressionDecoder(t, decodeValue)
	}
	dec.RegisterExpressionDecoder(reflect.TypeFor[time.Duration](), decodeDuration)
	dec.RegisterExpressionDecoder(reflect.TypeFor[*time.Duration](), decodeDuration)
	dec.RegisterBlockDecoder(reflect.TypeFor[api.Constraint](), decodeConstraint)
	dec.RegisterBlockDecoder(reflect.TypeFor[api.Affinity](), decodeAffinity)
	return dec
}

// blockKind says how blocks of one type name are decoded.
type blockKind int

const (
	// blockStruct is a block decoded by gohcl into a struct.
	blockStruct blockKind = iota
	// blockMap is a map of plain values (meta, env, ...), which may also be
	// written as a map argument.
	blockMap
	// blockFreeform is a map[string]any with no schema (config, policy).
	blockFreeform
	// blockLabeledMap is a map keyed by the block label (volume).
	blockLabeledMap
)

// blockShape is how a block type name is decoded wherever it appears.
type blockShape struct {
	kind blockKind
	// mapType is the Go type of a blockMap field.
	mapType reflect.Type
}

// shapes is what the api structs reachable from api.Job look like to the
// job language.
type shapes struct {
	// valueTypes are the Go types of arguments and map entries: each gets
	// decodeValue, so that its errors name the argument.
	valueTypes map[reflect.Type]bool
	// blocks are keyed by block type name, which the api structs use with
	// one shape only: jobBody relies on it, since it sees names, not fields.
	blocks map[string]blockShape
}

var apiShapes = shapesOf(reflect.TypeFor[api.Job]())

func shapesOf(root reflect.Type) *shapes {
	s := &shapes{valueTypes: map[reflect.Type]bool{}, blocks: map[string]blockShape{}}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, kind, _ := strings.Cut(f.Tag.Get("hcl"), ",")
			switch {
			case name == "" || name == "-" || kind == "label":
				continue
			case kind == "" || kind == "attr" || kind == "optional":
				s.valueTypes[f.Type] = true
				continue
			case kind != "block":
				// gohcl panics on tag kinds it does not know: fail when
				// the package loads instead, which any test run shows.
				panic(fmt.Sprintf("jobspec: %s.%s has hcl tag kind %q", t.Name(), f.Name, kind))
			}
			shape := blockShape{kind: blockStruct}
			ft := f.Type
			switch {
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Interface:
				shape.kind = blockFreeform
			case ft.Kind() == reflect.Map && structElem(ft.Elem()) != nil:
				shape.kind = blockLabeledMap
				ft = ft.Elem()
			case ft.Kind() == reflect.Map:
				shape = blockShape{kind: blockMap, mapType: ft}
				s.valueTypes[ft.Elem()] = true
			}
			// A single block and a list of blocks share blockStruct:
			// gohcl, which sees the field, tells them apart.
			if prev, ok := s.blocks[name]; ok && prev != shape {
				panic(fmt.Sprintf("jobspec: block %q has two shapes in the api structs", name))
			}
			s.blocks[name] = shape
			if st := structElem(ft); st != nil {
				walk(st)
			}
		}
	}
	walk(root)
	return s
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

// namedExpr is an argument's expression together with the argument's name,
// so that the decoders gohcl calls can name it in errors.
type namedExpr struct {
	hcl.Expression
	name string
}

// UnwrapExpression lets hcl's static analysis see the expression inside.
func (e namedExpr) UnwrapExpression() hcl.Expression { return e.Expression }

func exprName(expr hcl.Expression) string {
	if n, ok := expr.(namedExpr); ok {
		return n.name
	}
	return "value"
}

// decodeValue is the gohcl expression decoder for plain values: it converts
// the way gohcl does, with errors that name the argument and cover the whole
// expression.
func decodeValue(expr hcl.Expression, ctx *hcl.EvalContext, val any) hcl.Diagnostics {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() || v.IsNull() {
		return diags
	}
	ty, err := gocty.ImpliedType(val)
	if err == nil {
		v, err = convert.Convert(v, ty)
	}
	if err == nil {
		err = gocty.FromCtyValue(v, val)
	}
	if err != nil {
		diags = append(diags, valueDiag(exprName(expr), expr, err))
	}
	return diags
}

// errNotKnown is the error for a value that depends on something only known
// later, such as an unknown function result.
var errNotKnown = errors.New("the value is not known when the job is parsed")

// valueDiag reports a value that does not fit its field.
func valueDiag(name string, expr hcl.Expression, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Unsuitable value type",
		Detail:   fmt.Sprintf("%s: %s", name, err),
		Subject:  expr.Range().Ptr(),
	}
}

// rewordDuplicates gives gohcl's duplicate block errors the wording of the
// job language's other duplicate errors.
func rewordDuplicates(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		typ, ok := strings.CutPrefix(d.Summary, "Duplicate ")
		if !ok {
			continue
		}
		typ, ok = strings.CutSuffix(typ, " block")
		if !ok {
			continue
		}
		if prev, ok := strings.CutPrefix(d.Detail, fmt.Sprintf("Only one %s block is allowed. Another was defined at ", typ)); ok {
			d.Detail = fmt.Sprintf("Only one %s block is allowed here; another was defined at %s", typ, prev)
		}
	}
	return diags
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
