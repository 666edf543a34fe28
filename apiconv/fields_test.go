package apiconv

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// fieldPath is one field a submitted job can reach, with how to set it.
type fieldPath struct {
	key   string // "Type.Field", the fields table key
	steps []int  // field indexes from api.Job down to the field
	where string // the job, group or task the messages name
	rel   string // the field's path below where, as messages name it
	typ   reflect.Type
	rule  rule
}

// reachable lists every field Check looks at: the fields of api.Job, and
// recursively those of the types behind mapped, warned and fixed fields.
// unclassified collects the fields of those types that have no rule.
func reachable(t *testing.T) (paths []fieldPath, unclassified []string) {
	t.Helper()
	var visit func(ty reflect.Type, steps []int, where, rel string, stack []reflect.Type)
	visit = func(ty reflect.Type, steps []int, where, rel string, stack []reflect.Type) {
		if slices.Contains(stack, ty) {
			t.Fatalf("api type %s contains itself at %s", ty.Name(), rel)
		}
		stack = append(stack, ty)
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			key := ty.Name() + "." + f.Name
			r, ok := fields[key]
			if !ok {
				unclassified = append(unclassified, key)
				continue
			}
			p := f.Name
			if rel != "" {
				p = rel + "." + f.Name
			}
			st := append(slices.Clone(steps), i)
			paths = append(paths, fieldPath{key: key, steps: st, where: where, rel: p, typ: f.Type, rule: r})
			if r.kind == kindRefused || r.kind == kindIgnored {
				continue
			}
			inner, suffix := f.Type, ""
			for {
				switch inner.Kind() {
				case reflect.Pointer:
					inner = inner.Elem()
					continue
				case reflect.Slice:
					inner, suffix = inner.Elem(), suffix+"[0]"
					continue
				case reflect.Map:
					inner, suffix = inner.Elem(), suffix+`["k"]`
					continue
				}
				break
			}
			if inner.Kind() != reflect.Struct || inner.PkgPath() != apiPkg {
				continue
			}
			switch inner {
			case taskGroupType:
				visit(inner, st, where+` group "g"`, "", stack)
			case taskType:
				visit(inner, st, where+` task "t"`, "", stack)
			default:
				visit(inner, st, where, p+suffix, stack)
			}
		}
	}
	visit(reflect.TypeFor[api.Job](), nil, `job "j"`, "", nil)
	sort.Strings(unclassified)
	return paths, unclassified
}

// TestFields_Classified fails when a field reachable from api.Job has no
// line in the fields table, as happens when the api module gains one.
func TestFields_Classified(t *testing.T) {
	_, unclassified := reachable(t)
	must.SliceEmpty(t, unclassified, must.Sprintf(
		"api fields without a line in apiconv/fields.go (classify each as mapped, refused, warned, fixed or ignored): %v", unclassified))
}

// TestFields_TableNamesRealFields keeps the table free of stale lines:
// each key names an exported field of an api type a job contains.
func TestFields_TableNamesRealFields(t *testing.T) {
	types := map[string]reflect.Type{}
	var collect func(reflect.Type)
	collect = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || ty.PkgPath() != apiPkg || types[ty.Name()] != nil {
			return
		}
		types[ty.Name()] = ty
		for i := range ty.NumField() {
			collect(ty.Field(i).Type)
		}
	}
	collect(reflect.TypeFor[api.Job]())
	var stale []string
	for key := range fields {
		typ, field, _ := strings.Cut(key, ".")
		ty := types[typ]
		if ty == nil {
			stale = append(stale, key)
			continue
		}
		if f, ok := ty.FieldByName(field); !ok || !f.IsExported() {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale)
	must.SliceEmpty(t, stale, must.Sprintf("fields table lines that name no api field: %v", stale))
}

// TestFields_Behaviour sets each reachable field alone on a minimal job
// and checks that Convert does what the table says: a mapped field changes
// the converted job, a refused one is refused by name, a warned one warns,
// a fixed one refuses any other value, an ignored one is accepted.
func TestFields_Behaviour(t *testing.T) {
	paths, _ := reachable(t)
	for _, fp := range paths {
		t.Run(fp.key+"@"+fp.where+"/"+fp.rel, func(t *testing.T) {
			samples := sampleValues(fp.typ)
			must.SliceNotEmpty(t, samples, must.Sprintf("no sample value for %s", fp.typ))
			switch fp.rule.kind {
			case kindMapped:
				if structBehind(fp.typ) {
					// A block takes effect through its fields, which are
					// checked on their own; the block itself only needs one.
					return
				}
				base, _, err := Convert(jobWith(fp, reflect.Zero(fp.typ)))
				must.NoError(t, err)
				changed := false
				for _, s := range samples {
					got, _, err := Convert(jobWith(fp, s))
					must.NoError(t, err, must.Sprintf("mapped field set to %v", s))
					changed = changed || !reflect.DeepEqual(base, got)
				}
				must.True(t, changed, must.Sprintf("setting %s does not change the converted job: map it, or classify it otherwise", fp.rel))
			case kindRefused:
				_, _, err := Convert(jobWith(fp, samples[0]))
				must.EqError(t, err, fmt.Sprintf("%s: field %q is not supported by nomadq", fp.where, fp.rel))
			case kindWarned:
				_, warnings, err := Convert(jobWith(fp, samples[0]))
				must.NoError(t, err)
				must.SliceNotEmpty(t, warnings)
				must.StrContains(t, warnings[0], fp.where+": ")
				must.StrContains(t, warnings[0], fp.rule.warning)
			case kindIgnored:
				must.NotEq(t, "", fp.rule.reason, must.Sprint("an ignored field needs its reason"))
				_, _, err := Convert(jobWith(fp, samples[0]))
				must.NoError(t, err)
			case kindFixed:
				for _, ok := range fp.rule.values {
					_, _, err := Convert(jobWith(fp, valueOf(fp.typ, ok)))
					must.NoError(t, err, must.Sprintf("allowed value %v", ok))
				}
				bad := slices.IndexFunc(samples, func(s reflect.Value) bool { return !fp.rule.allows(s) })
				must.NonNegative(t, bad, must.Sprint("no sample outside the allowed values"))
				_, _, err := Convert(jobWith(fp, samples[bad]))
				must.ErrorContains(t, err, fmt.Sprintf("%s: field %q = ", fp.where, fp.rel))
				must.ErrorContains(t, err, "is not supported by nomadq")
			default:
				t.Fatalf("unknown rule kind %d", fp.rule.kind)
			}
		})
	}
}

// minimalJob is the smallest service job: group "g", task "t". Its task
// uses the exec driver, which honours every task field nomadq maps (a
// task user among them).
func minimalJob() *api.Job {
	return &api.Job{
		ID:          new("j"),
		Type:        new("service"),
		Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name:  new("g"),
			Tasks: []*api.Task{{Name: "t", Driver: "exec", Config: map[string]any{"command": "/bin/true"}}},
		}},
	}
}

// jobWith returns minimalJob with the field at fp set to v, creating the
// blocks on the way (one element for a list, key "k" for a map).
func jobWith(fp fieldPath, v reflect.Value) *api.Job {
	job := minimalJob()
	cur := reflect.ValueOf(job).Elem()
	for _, step := range fp.steps[:len(fp.steps)-1] {
		f := cur.Field(step)
		cur = enter(f)
	}
	cur.Field(fp.steps[len(fp.steps)-1]).Set(v)
	return job
}

// enter returns the struct a block field holds, creating it when empty.
func enter(f reflect.Value) reflect.Value {
	switch f.Kind() {
	case reflect.Pointer:
		if f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		}
		return enter(f.Elem())
	case reflect.Slice:
		if f.Len() == 0 {
			f.Set(reflect.Append(f, newElem(f.Type().Elem())))
		}
		return enter(f.Index(0))
	case reflect.Map:
		if f.Len() == 0 {
			f.Set(reflect.MakeMap(f.Type()))
			f.SetMapIndex(reflect.ValueOf("k"), newElem(f.Type().Elem()))
		}
		// Map values are not addressable: every map of blocks in the api
		// types holds pointers.
		return enter(f.MapIndex(reflect.ValueOf("k")))
	}
	return f
}

func newElem(t reflect.Type) reflect.Value {
	if t.Kind() == reflect.Pointer {
		return reflect.New(t.Elem())
	}
	return reflect.New(t).Elem()
}

// structBehind reports whether t is a block: an api struct, or a pointer,
// list or map of them.
func structBehind(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && t.PkgPath() == apiPkg
}

var durationType = reflect.TypeFor[time.Duration]()

// sampleValues returns non-zero values of type t, two where the type has
// two that differ, so that a field whose default equals one still shows
// that it is mapped.
func sampleValues(t reflect.Type) []reflect.Value {
	var out []reflect.Value
	switch t.Kind() {
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct {
			return []reflect.Value{reflect.New(t.Elem())}
		}
		for _, s := range append(sampleValues(t.Elem()), reflect.Zero(t.Elem())) {
			p := reflect.New(t.Elem())
			p.Elem().Set(s)
			out = append(out, p)
		}
		return out
	case reflect.Struct:
		return []reflect.Value{reflect.New(t).Elem()}
	case reflect.String:
		return []reflect.Value{valueOf(t, "x7"), valueOf(t, "y8")}
	case reflect.Bool:
		return []reflect.Value{reflect.ValueOf(true)}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if t == durationType {
			return []reflect.Value{reflect.ValueOf(7 * time.Second), reflect.ValueOf(8 * time.Second)}
		}
		a, b := reflect.New(t).Elem(), reflect.New(t).Elem()
		a.SetInt(7)
		b.SetInt(8)
		return []reflect.Value{a, b}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		a, b := reflect.New(t).Elem(), reflect.New(t).Elem()
		a.SetUint(7)
		b.SetUint(8)
		return []reflect.Value{a, b}
	case reflect.Interface:
		return []reflect.Value{reflect.ValueOf("x7"), reflect.ValueOf("y8")}
	case reflect.Slice:
		for _, s := range sampleValues(t.Elem()) {
			out = append(out, reflect.Append(reflect.MakeSlice(t, 0, 1), s))
		}
		return out
	case reflect.Map:
		for _, s := range sampleValues(t.Elem()) {
			m := reflect.MakeMap(t)
			m.SetMapIndex(reflect.ValueOf("k").Convert(t.Key()), s)
			out = append(out, m)
		}
		return out
	}
	return nil
}

// valueOf converts x to a value of field type t, through a pointer when t
// is one.
func valueOf(t reflect.Type, x any) reflect.Value {
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		p.Elem().Set(reflect.ValueOf(x).Convert(t.Elem()))
		return p
	}
	return reflect.ValueOf(x).Convert(t)
}
