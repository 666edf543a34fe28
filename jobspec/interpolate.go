package jobspec

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// keepForClient is the EvalContext.UndefinedVariable hook. References to
// roots the parser does not know (attr, node, meta, env, NOMAD_*, ...) are
// runtime values: they are written back as literal ${...} text so the client
// can interpolate them when it places the task.
func keepForClient(t hcl.Traversal) (cty.Value, hcl.Diagnostics) {
	return cty.StringVal("${" + traversalString(t) + "}"), nil
}

// traversalString renders a traversal in HCL syntax, e.g. env["X"] or
// attr.kernel.name.
func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteByte('.')
			b.WriteString(s.Name)
		case hcl.TraverseIndex:
			switch {
			case s.Key.Type() == cty.String && s.Key.IsKnown():
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			case s.Key.Type() == cty.Number && s.Key.IsKnown():
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', -1))
			default:
				b.WriteString("[?]")
			}
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

// explainUndefined rewrites the generic "Unsupported attribute" error that
// HCL gives for var.x or local.x when x does not exist into one that says
// which variable or local is missing. pending names locals that exist but
// could not be evaluated (a reference cycle).
func explainUndefined(diags hcl.Diagnostics, pending map[string]bool) hcl.Diagnostics {
	for _, d := range diags {
		if d.Summary != "Unsupported attribute" || d.Expression == nil {
			continue
		}
		trav, tdiags := hcl.AbsTraversalForExpr(d.Expression)
		if tdiags.HasErrors() || len(trav) < 2 {
			continue
		}
		attr, ok := trav[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		switch root := trav.RootName(); {
		case root == "var":
			d.Summary = "Undefined variable"
			d.Detail = fmt.Sprintf("var.%s: no variable %q is declared", attr.Name, attr.Name)
		case root == "local" && pending[attr.Name]:
			d.Summary = "Unresolvable local value"
			d.Detail = fmt.Sprintf("local.%s: local %q cannot be evaluated; its references form a cycle", attr.Name, attr.Name)
		case root == "local":
			d.Summary = "Undefined local value"
			d.Detail = fmt.Sprintf("local.%s: no local %q is defined", attr.Name, attr.Name)
		}
	}
	return diags
}
