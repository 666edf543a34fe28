package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/nomad/api"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// shorthand is a key such as `regexp = "x"` that stands for an operator and
// its right-hand value.
type shorthand struct {
	name string
	// flag shorthands take a bool and set only the operator.
	flag bool
	// ltarget shorthands take the left-hand target (distinct_property).
	ltarget bool
}

var constraintShorthands = []shorthand{
	{name: "version"},
	{name: "semver"},
	{name: "regexp"},
	{name: "set_contains"},
	{name: "set_contains_any"},
	{name: "set_contains_all"},
	{name: "distinct_hosts", flag: true},
	{name: "distinct_property", ltarget: true},
	{name: "is_set", flag: true},
	{name: "is_not_set", flag: true},
}

var affinityShorthands = []shorthand{
	{name: "version"},
	{name: "semver"},
	{name: "regexp"},
	{name: "set_contains"},
	{name: "set_contains_any"},
	{name: "set_contains_all"},
}

var (
	constraintSchema = targetSchema(constraintShorthands, false)
	affinitySchema   = targetSchema(affinityShorthands, true)
)

func targetSchema(shorthands []shorthand, weight bool) *hcl.BodySchema {
	s := &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "attribute"}, {Name: "value"}, {Name: "operator"},
	}}
	if weight {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: "weight"})
	}
	for _, sh := range shorthands {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: sh.name})
	}
	return s
}

// targets are the fields constraints and affinities share.
type targets struct {
	ltarget, rtarget, operand *string
}

// decodeConstraint is the gohcl block decoder for api.Constraint.
func decodeConstraint(body hcl.Body, ctx *hcl.EvalContext, val any) hcl.Diagnostics {
	c := val.(*api.Constraint)
	content, diags := body.Content(constraintSchema)
	if content == nil {
		return diags
	}
	return append(diags, decodeTargets(content, ctx, targets{&c.LTarget, &c.RTarget, &c.Operand}, constraintShorthands)...)
}

// decodeAffinity is the gohcl block decoder for api.Affinity.
func decodeAffinity(body hcl.Body, ctx *hcl.EvalContext, val any) hcl.Diagnostics {
	a := val.(*api.Affinity)
	content, diags := body.Content(affinitySchema)
	if content == nil {
		return diags
	}
	if w := content.Attributes["weight"]; w != nil {
		diags = append(diags, decodeValue(w.Expr, ctx, &a.Weight)...)
	}
	return append(diags, decodeTargets(content, ctx, targets{&a.LTarget, &a.RTarget, &a.Operand}, affinityShorthands)...)
}

// decodeTargets fills attribute/value/operator and applies at most one
// operator shorthand, the way Nomad's job language defines them.
func decodeTargets(content *hcl.BodyContent, ctx *hcl.EvalContext, t targets, shorthands []shorthand) hcl.Diagnostics {
	var diags hcl.Diagnostics
	str := func(name string, dst *string) {
		if a := content.Attributes[name]; a != nil {
			diags = append(diags, decodeValue(a.Expr, ctx, dst)...)
		}
	}
	str("attribute", t.ltarget)
	str("value", t.rtarget)
	str("operator", t.operand)

	var opAttr *hcl.Attribute
	if a := content.Attributes["operator"]; a != nil {
		opAttr = a
	}
	for _, sh := range shorthands {
		a := content.Attributes[sh.name]
		if a == nil {
			continue
		}
		if opAttr != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Conflicting operators",
				Detail:   fmt.Sprintf("%s: only one of operator or an operator shorthand may be set; %s is set at %s", sh.name, opAttr.Name, opAttr.NameRange),
				Subject:  a.NameRange.Ptr(),
			})
			continue
		}
		opAttr = a
		val, ds := a.Expr.Value(ctx)
		diags = append(diags, ds...)
		if ds.HasErrors() || val.IsNull() {
			continue
		}
		want := cty.String
		if sh.flag {
			want = cty.Bool
		}
		conv, err := convert.Convert(val, want)
		if err != nil || !conv.IsKnown() {
			if err == nil {
				err = fmt.Errorf("value is not known")
			}
			diags = append(diags, valueDiag(sh.name, a.Expr, err))
			continue
		}
		switch {
		case sh.flag:
			if conv.True() {
				*t.operand = sh.name
			}
		case sh.ltarget:
			*t.operand = sh.name
			*t.ltarget = conv.AsString()
		default:
			*t.operand = sh.name
			*t.rtarget = conv.AsString()
		}
	}
	// The job language's default operator, written out as Nomad's parser
	// writes it: real Nomad refuses a constraint without one.
	if *t.operand == "" {
		*t.operand = "="
	}
	return diags
}
