package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// evalLocals evaluates the attributes of all locals blocks and returns the
// `local` object. A local may refer to another, in any order: pending locals
// are retried while each pass resolves at least one, which bounds the work at
// n passes and reports reference cycles as the errors of the last pass.
func evalLocals(blocks []*hcl.Block, varVal cty.Value, funcs map[string]function.Function) (cty.Value, hcl.Diagnostics) {
	var (
		pending []*hcl.Attribute
		diags   hcl.Diagnostics
		seen    = map[string]*hcl.Attribute{}
	)
	for _, b := range blocks {
		attrs, ds := b.Body.JustAttributes()
		diags = append(diags, ds...)
		for _, a := range sortedAttrs(attrs) {
			if prev := seen[a.Name]; prev != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate local value",
					Detail:   fmt.Sprintf("local %q was already defined at %s", a.Name, prev.NameRange),
					Subject:  a.NameRange.Ptr(),
				})
				continue
			}
			seen[a.Name] = a
			pending = append(pending, a)
		}
	}
	if diags.HasErrors() {
		return cty.NilVal, diags
	}

	values := map[string]cty.Value{}
	for len(pending) > 0 {
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{
				"var":   varVal,
				"local": cty.ObjectVal(values),
			},
			Functions:         funcs,
			UndefinedVariable: keepForClient,
		}
		var (
			next     []*hcl.Attribute
			lastErrs hcl.Diagnostics
		)
		for _, a := range pending {
			val, ds := a.Expr.Value(ctx)
			if ds.HasErrors() {
				next = append(next, a)
				lastErrs = append(lastErrs, ds...)
				continue
			}
			values[a.Name] = val
		}
		if len(next) == len(pending) {
			stuck := make(map[string]bool, len(next))
			for _, a := range next {
				stuck[a.Name] = true
			}
			return cty.NilVal, sortDiags(explainUndefined(lastErrs, stuck))
		}
		pending = next
	}
	return cty.ObjectVal(values), nil
}
