package agent

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// nullEntry returns where a decoded request body holds null as an entry
// of a list or a value of a map whose entries are objects
// ("TaskGroups[0].Tasks[1]", `Volumes["data"]`), or "" when it holds none.
// Such an entry decodes to a nil pointer that nothing downstream expects
// (the api module's Canonicalize dereferences every task group and task),
// and it never means anything, so decodeBody refuses it by its place.
// Values behind interfaces (a task's driver config) are the driver's to
// judge and are not walked.
func nullEntry(v reflect.Value, path string) string {
	if !mayHoldNullEntry(v.Type()) {
		return ""
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return nullEntry(v.Elem(), path)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := jsonName(f)
			if name == "-" {
				continue
			}
			if path != "" {
				name = path + "." + name
			}
			if p := nullEntry(v.Field(i), name); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			e := v.Index(i)
			at := fmt.Sprintf("%s[%d]", path, i)
			if e.Kind() == reflect.Pointer && e.IsNil() {
				return at
			}
			if p := nullEntry(e, at); p != "" {
				return p
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(a, b int) bool { return fmt.Sprint(keys[a]) < fmt.Sprint(keys[b]) })
		for _, k := range keys {
			e := v.MapIndex(k)
			at := fmt.Sprintf("%s[%q]", path, fmt.Sprint(k))
			if e.Kind() == reflect.Pointer && e.IsNil() {
				return at
			}
			if p := nullEntry(e, at); p != "" {
				return p
			}
		}
	}
	return ""
}

// jsonName is the key a struct field is decoded from.
func jsonName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	return f.Name
}

// nullHolders caches, per type, whether a value of it can hold a list or
// map entry of pointer type (map[reflect.Type]bool): a job body is walked
// on every registration, and most of its fields are strings and numbers.
var nullHolders sync.Map

func mayHoldNullEntry(t reflect.Type) bool {
	if v, ok := nullHolders.Load(t); ok {
		return v.(bool)
	}
	// A recursive type is taken to hold one while it is being worked out.
	nullHolders.Store(t, true)
	out := false
	switch t.Kind() {
	case reflect.Pointer:
		out = mayHoldNullEntry(t.Elem())
	case reflect.Slice, reflect.Array, reflect.Map:
		out = t.Elem().Kind() == reflect.Pointer || mayHoldNullEntry(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldNullEntry(f.Type) {
				out = true
				break
			}
		}
	}
	nullHolders.Store(t, out)
	return out
}
