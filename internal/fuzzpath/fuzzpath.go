// Package fuzzpath lets a fuzz target change one field of a well-formed
// input decoded into maps and lists, so that the fuzzer explores values
// the decoder accepts instead of stopping at malformed bytes. Only tests
// import it; it must not be imported by code that ships in the binary.
package fuzzpath

import (
	"strconv"
	"strings"
)

// Set sets the value at a dotted path of maps and list indexes (such as
// "Job.TaskGroups.0.Count"), making the maps that are missing; a path
// through anything else (a string, an index out of range) is left as it
// is.
func Set(m map[string]any, path string, v any) {
	key, rest, more := strings.Cut(path, ".")
	if !more {
		m[key] = v
		return
	}
	switch n := m[key].(type) {
	case nil:
		child := map[string]any{}
		m[key] = child
		Set(child, rest, v)
	case map[string]any:
		Set(n, rest, v)
	case []any:
		idx, rest, more := strings.Cut(rest, ".")
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || i >= len(n) {
			return
		}
		if !more {
			n[i] = v
			return
		}
		child, ok := n[i].(map[string]any)
		if !ok {
			if n[i] != nil {
				return
			}
			child = map[string]any{}
			n[i] = child
		}
		Set(child, rest, v)
	}
}
