package jobspec

import (
	"fmt"
	"math/big"
	"reflect"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// decodeDuration stores a duration attribute into a time.Duration or
// *time.Duration field. A string is a Go duration ("10m", "1h30m"); a number
// is nanoseconds, which is how HCL-JSON and the HTTP API write durations.
func (d *decoder) decodeDuration(name string, expr hcl.Expression, fv reflect.Value) hcl.Diagnostics {
	val, diags := expr.Value(d.ctx)
	if diags.HasErrors() || val.IsNull() {
		return diags
	}
	dur, err := ctyDuration(val)
	if err != nil {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid duration",
			Detail:   fmt.Sprintf("%s: %s", name, err),
			Subject:  expr.Range().Ptr(),
		})
	}
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.ValueOf(&dur))
	} else {
		fv.SetInt(int64(dur))
	}
	return diags
}

// ctyDuration converts a string or number value to a duration.
func ctyDuration(val cty.Value) (time.Duration, error) {
	if !val.IsKnown() {
		return 0, fmt.Errorf("the value is not known when the job is parsed")
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
