package config

import (
	"math/big"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Value converters. Each returns a setter that reports a type mismatch
// with the key's position.

func (d *cfgDecoder) str(key string, into *string) setter {
	return func(v cty.Value, rng hcl.Range) {
		if s, ok := d.toString(key, v, rng); ok {
			*into = s
		}
	}
}

func (d *cfgDecoder) toString(key string, v cty.Value, rng hcl.Range) (string, bool) {
	if v.IsNull() || !v.IsKnown() {
		d.errorf(rng, "%s must be a string", key)
		return "", false
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), true
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), true
	case cty.Bool:
		if v.True() {
			return "true", true
		}
		return "false", true
	}
	d.errorf(rng, "%s must be a string, got %s", key, v.Type().FriendlyName())
	return "", false
}

func (d *cfgDecoder) boolean(key string, into *bool) setter {
	return func(v cty.Value, rng hcl.Range) {
		if !v.IsNull() && v.Type() == cty.Bool {
			*into = v.True()
			return
		}
		if !v.IsNull() && v.Type() == cty.String {
			switch v.AsString() {
			case "true":
				*into = true
				return
			case "false":
				*into = false
				return
			}
		}
		d.errorf(rng, "%s must be a bool (true or false), got %s", key, friendly(v))
	}
}

// enable reads a bool the way Nomad merges it across files and over
// -dev: true turns the setting on, false leaves what an earlier file or
// the defaults set (so a harness file saying client.enabled = false does
// not take the client away from nomad agent -dev).
func (d *cfgDecoder) enable(key string, into *bool) setter {
	return func(v cty.Value, rng hcl.Range) {
		var b bool
		if d.boolean(key, &b)(v, rng); b {
			*into = true
		}
	}
}

// positive reads a whole number the way Nomad merges it: 0 leaves what
// an earlier file or the defaults set.
func (d *cfgDecoder) positive(key string, into *int) setter {
	return func(v cty.Value, rng hcl.Range) {
		var i int
		if d.integer(key, &i)(v, rng); i != 0 {
			*into = i
		}
	}
}

func (d *cfgDecoder) integer(key string, into *int) setter {
	return func(v cty.Value, rng hcl.Range) {
		if !v.IsNull() && v.Type() == cty.Number {
			bf := v.AsBigFloat()
			if i, acc := bf.Int64(); acc == big.Exact {
				*into = int(i)
				return
			}
		}
		d.errorf(rng, "%s must be a whole number, got %s", key, friendly(v))
	}
}

func (d *cfgDecoder) duration(key string, into *time.Duration) setter {
	return func(v cty.Value, rng hcl.Range) {
		if !v.IsNull() && v.Type() == cty.String {
			dur, err := time.ParseDuration(v.AsString())
			if err == nil {
				*into = dur
				return
			}
			d.errorf(rng, "%s %q is not a duration (for example \"30s\" or \"5m\")", key, v.AsString())
			return
		}
		if !v.IsNull() && v.Type() == cty.Number {
			i, _ := v.AsBigFloat().Int64()
			*into = time.Duration(i)
			return
		}
		d.errorf(rng, "%s must be a duration string, got %s", key, friendly(v))
	}
}

func (d *cfgDecoder) strList(key string, into *[]string) setter {
	return func(v cty.Value, rng hcl.Range) {
		if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
			d.errorf(rng, "%s must be a list of strings, got %s", key, friendly(v))
			return
		}
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, ok := d.toString(key, ev, rng)
			if !ok {
				return
			}
			out = append(out, s)
		}
		*into = out
	}
}

func (d *cfgDecoder) strMap(key string, into map[string]string) setter {
	return func(v cty.Value, rng hcl.Range) {
		if v.IsNull() || !(v.Type().IsMapType() || v.Type().IsObjectType()) {
			d.errorf(rng, "%s must be a map of strings, got %s", key, friendly(v))
			return
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			s, ok := d.toString(key+"."+k.AsString(), ev, rng)
			if ok {
				into[k.AsString()] = s
			}
		}
	}
}

func friendly(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Type().FriendlyName()
}

// ctyToGo converts a plugin config value to plain Go values.
func ctyToGo(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		var out []any
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, ctyToGo(ev))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = ctyToGo(ev)
		}
		return out
	}
	return nil
}
