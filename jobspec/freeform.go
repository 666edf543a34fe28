package jobspec

import (
	"fmt"
	"math/big"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// decodeFreeform decodes a block with no fixed schema, such as a task's
// config, into a map. Attributes become entries; nested blocks become lists
// of maps under their type name (a labeled block nests one map level per
// label), which is what task drivers expect.
func (st *decodeState) decodeFreeform(body hcl.Body, def hcl.Range) (map[string]any, hcl.Diagnostics) {
	sb := st.syntaxBodies[def.Start.Byte]
	if sb == nil {
		// HCL-JSON: nested objects are plain attribute values.
		attrs, diags := body.JustAttributes()
		out := make(map[string]any, len(attrs))
		for _, a := range sortedAttrs(attrs) {
			v, ds := st.freeformValue(a.Name, a.Expr)
			diags = append(diags, ds...)
			out[a.Name] = v
		}
		return out, diags
	}

	schema := &hcl.BodySchema{}
	for name := range sb.Attributes {
		schema.Attributes = append(schema.Attributes, hcl.AttributeSchema{Name: name})
	}
	seen := map[string]bool{}
	for _, b := range sb.Blocks {
		typ, nLabels := b.Type, len(b.Labels)
		if typ == "dynamic" && len(b.Labels) == 1 {
			typ, nLabels = b.Labels[0], 0
		}
		if seen[typ] {
			continue
		}
		seen[typ] = true
		labels := make([]string, nLabels)
		for i := range labels {
			labels[i] = fmt.Sprintf("label%d", i)
		}
		schema.Blocks = append(schema.Blocks, hcl.BlockHeaderSchema{Type: typ, LabelNames: labels})
	}

	content, diags := body.Content(schema)
	if content == nil {
		return nil, diags
	}
	out := make(map[string]any, len(content.Attributes)+len(content.Blocks))
	for _, a := range sortedAttrs(content.Attributes) {
		v, ds := st.freeformValue(a.Name, a.Expr)
		diags = append(diags, ds...)
		out[a.Name] = v
	}
	for _, b := range content.Blocks {
		m, ds := st.decodeFreeform(b.Body, b.DefRange)
		diags = append(diags, ds...)
		var entry any = m
		for i := len(b.Labels) - 1; i >= 0; i-- {
			entry = map[string]any{b.Labels[i]: entry}
		}
		list, isList := out[b.Type].([]map[string]any)
		if _, isAttr := content.Attributes[b.Type]; isAttr && !isList {
			// The block list would replace the attribute's value.
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Both an argument and a block named %q", b.Type),
				Detail:   fmt.Sprintf("%q is set as an argument and as a block; write it one way.", b.Type),
				Subject:  b.DefRange.Ptr(),
			})
			continue
		}
		out[b.Type] = append(list, entry.(map[string]any))
	}
	return out, diags
}

func (st *decodeState) freeformValue(name string, expr hcl.Expression) (any, hcl.Diagnostics) {
	val, diags := expr.Value(st.ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	v, err := ctyToGo(val)
	if err != nil {
		return nil, append(diags, valueDiag(name, expr, err))
	}
	return v, diags
}

// ctyToGo converts a value to plain Go data: string, bool, int (for whole
// numbers) or float64, []any and map[string]any.
func ctyToGo(val cty.Value) (any, error) {
	if val.IsNull() {
		return nil, nil
	}
	if !val.IsWhollyKnown() {
		return nil, errNotKnown
	}
	ty := val.Type()
	switch {
	case ty == cty.String:
		return val.AsString(), nil
	case ty == cty.Bool:
		return val.True(), nil
	case ty == cty.Number:
		bf := val.AsBigFloat()
		if bf.IsInt() {
			if n, acc := bf.Int64(); acc == big.Exact {
				return int(n), nil
			}
		}
		f, _ := bf.Float64()
		return f, nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		out := make([]any, 0, val.LengthInt())
		for it := val.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			v, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any, val.LengthInt())
		for it := val.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			v, err := ctyToGo(ev)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.AsString(), err)
			}
			out[k.AsString()] = v
		}
		return out, nil
	default:
		return nil, fmt.Errorf("a value of type %s cannot be used here", ty.FriendlyName())
	}
}
