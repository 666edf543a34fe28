package jobspec

import (
	"fmt"
	"math/big"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// decodeDuration is the gohcl expression decoder for time.Duration and
// *time.Duration. A string is a Go duration ("10m", "1h30m"); a number is
// nanoseconds, which is how HCL-JSON and the HTTP API write durations.
func decodeDuration(expr hcl.Expression, ctx *hcl.EvalContext, val any) hcl.Diagnostics {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() || v.IsNull() {
		return diags
	}
	dur, err := ctyDuration(v)
	if err != nil {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid duration",
			Detail:   fmt.Sprintf("%s: %s", exprName(expr), err),
			Subject:  expr.Range().Ptr(),
		})
	}
	switch p := val.(type) {
	case *time.Duration:
		*p = dur
	case **time.Duration:
		*p = &dur
	}
	return diags
}

// ctyDuration converts a string or number value to a duration.
func ctyDuration(val cty.Value) (time.Duration, error) {
	if !val.IsKnown() {
		return 0, errNotKnown
	}
	switch val.Type() {
	case cty.String:
		return time.ParseDuration(val.AsString())
	case cty.Number:
		bf := val.AsBigFloat()
		if !bf.IsInt() {
			return 0, fmt.Errorf("a number of nanoseconds must be whole, got %s", bf.Text('f', -1))
		}
		n, acc := bf.Int64()
		if acc != big.Exact {
			return 0, fmt.Errorf("%s nanoseconds is out of range", bf.Text('f', -1))
		}
		return time.Duration(n), nil
	default:
		return 0, fmt.Errorf("a duration string such as \"10s\" or a number of nanoseconds is required, got %s", val.Type().FriendlyName())
	}
}
