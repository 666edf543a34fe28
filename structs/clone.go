package structs

import (
	"maps"
	"slices"
)

// clonePtr returns a pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// CopyConfig deep-copies a free-form driver configuration: nested maps and
// slices are copied, other values are copied by assignment.
func CopyConfig(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyConfigValue(v)
	}
	return out
}

func copyConfigValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CopyConfig(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyConfigValue(e)
		}
		return out
	case []map[string]any:
		if x == nil {
			return x
		}
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = CopyConfig(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case []int:
		return slices.Clone(x)
	case []int64:
		return slices.Clone(x)
	case []float64:
		return slices.Clone(x)
	case []bool:
		return slices.Clone(x)
	case []byte:
		return slices.Clone(x)
	case map[string]string:
		return maps.Clone(x)
	}
	return v
}
