// Package deepcopytest checks deep copies: it fills a value and all it
// reaches with non-zero data, and finds the memory two values share, so a
// test can tell a copy that misses a field added later.
package deepcopytest

import (
	"fmt"
	"reflect"
	"strconv"
	"time"
)

// Fill sets v and everything it reaches to non-zero values: two
// elements per slice, one entry per map, and for an interface (a task's
// driver Config) a nested tree of maps and slices. A type already being
// filled higher up is left zero, so recursive types end.
func Fill(v reflect.Value, filling map[reflect.Type]bool) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.String:
		v.SetString("s")
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"k": []any{"v", map[string]any{"n": int64(1)}}}))
	case reflect.Pointer:
		if filling[v.Type().Elem()] {
			return
		}
		p := reflect.New(v.Type().Elem())
		Fill(p.Elem(), filling)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			Fill(s.Index(i), filling)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			Fill(v.Index(i), filling)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		Fill(k, filling)
		e := reflect.New(v.Type().Elem()).Elem()
		Fill(e, filling)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(1700000000, 0).UTC()))
			return
		}
		filling[v.Type()] = true
		defer delete(filling, v.Type())
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(v.Field(i), filling)
			}
		}
	}
}

// FindShared appends the path of every pointer, slice or map the two
// values share, except at the paths in allowed.
func FindShared(path string, a, b reflect.Value, allowed map[string]bool, out *[]string) {
	switch a.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if a.IsNil() || b.IsNil() || allowed[path] {
			return
		}
		if a.Pointer() == b.Pointer() && (a.Kind() != reflect.Slice || a.Len() > 0) {
			*out = append(*out, path)
			return
		}
	}
	switch a.Kind() {
	case reflect.Pointer:
		FindShared(path, a.Elem(), b.Elem(), allowed, out)
	case reflect.Interface:
		if !a.IsNil() && !b.IsNil() {
			FindShared(path, a.Elem(), b.Elem(), allowed, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range min(a.Len(), b.Len()) {
			FindShared(path+"["+strconv.Itoa(i)+"]", a.Index(i), b.Index(i), allowed, out)
		}
	case reflect.Map:
		it := a.MapRange()
		for it.Next() {
			if bv := b.MapIndex(it.Key()); bv.IsValid() {
				FindShared(path+"["+fmt.Sprint(it.Key())+"]", it.Value(), bv, allowed, out)
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				FindShared(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i), allowed, out)
			}
		}
	}
}
