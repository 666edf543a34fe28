package jobdiff

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// jobDiffSkip are the job fields the server sets; a diff of what the user
// wrote leaves them out.
var jobDiffSkip = map[string]bool{
	"CreateIndex": true, "ModifyIndex": true, "JobModifyIndex": true, "Version": true, "SubmitTime": true,
	"Status": true, "StatusDescription": true, "Stable": true, "TaskGroups": true,
}

var groupDiffSkip = map[string]bool{"Name": true, "Tasks": true}
var taskDiffSkip = map[string]bool{"Name": true}

// Diff returns the change from old to new, listing only what changed
// (Type Added, Deleted or Edited); old nil means the job is new.
func Diff(old, new *structs.Job) *structs.JobDiff {
	d := &structs.JobDiff{ID: new.ID, Type: structs.DiffTypeEdited}
	var ov reflect.Value
	if old == nil {
		d.Type = structs.DiffTypeAdded
	} else {
		ov = reflect.ValueOf(old).Elem()
	}
	d.Fields, d.Objects = diffStruct(ov, reflect.ValueOf(new).Elem(), jobDiffSkip)

	oldGroups := map[string]*structs.TaskGroup{}
	if old != nil {
		for _, tg := range old.TaskGroups {
			oldGroups[tg.Name] = tg
		}
	}
	seen := map[string]bool{}
	for _, tg := range new.TaskGroups {
		seen[tg.Name] = true
		if g := groupDiff(oldGroups[tg.Name], tg); g != nil {
			d.TaskGroups = append(d.TaskGroups, g)
		}
	}
	if old != nil {
		for _, tg := range old.TaskGroups {
			if !seen[tg.Name] {
				d.TaskGroups = append(d.TaskGroups, groupDiff(tg, nil))
			}
		}
	}
	if d.Type == structs.DiffTypeEdited && len(d.Fields) == 0 && len(d.Objects) == 0 && len(d.TaskGroups) == 0 {
		d.Type = structs.DiffTypeNone
	}
	return d
}

// groupDiff returns nil when the group did not change.
func groupDiff(old, new *structs.TaskGroup) *structs.TaskGroupDiff {
	g := &structs.TaskGroupDiff{Type: structs.DiffTypeEdited}
	var ov, nv reflect.Value
	switch {
	case old == nil:
		g.Type, g.Name = structs.DiffTypeAdded, new.Name
		nv = reflect.ValueOf(new).Elem()
	case new == nil:
		g.Type, g.Name = structs.DiffTypeDeleted, old.Name
		ov = reflect.ValueOf(old).Elem()
	default:
		g.Name = new.Name
		ov, nv = reflect.ValueOf(old).Elem(), reflect.ValueOf(new).Elem()
	}
	g.Fields, g.Objects = diffStruct(ov, nv, groupDiffSkip)

	oldTasks := map[string]*structs.Task{}
	if old != nil {
		for _, t := range old.Tasks {
			oldTasks[t.Name] = t
		}
	}
	seen := map[string]bool{}
	if new != nil {
		for _, t := range new.Tasks {
			seen[t.Name] = true
			if td := taskDiff(oldTasks[t.Name], t); td != nil {
				g.Tasks = append(g.Tasks, td)
			}
		}
	}
	if old != nil {
		for _, t := range old.Tasks {
			if !seen[t.Name] {
				g.Tasks = append(g.Tasks, taskDiff(t, nil))
			}
		}
	}
	if g.Type == structs.DiffTypeEdited && len(g.Fields) == 0 && len(g.Objects) == 0 && len(g.Tasks) == 0 {
		return nil
	}
	return g
}

func taskDiff(old, new *structs.Task) *structs.TaskDiff {
	t := &structs.TaskDiff{Type: structs.DiffTypeEdited}
	var ov, nv reflect.Value
	switch {
	case old == nil:
		t.Type, t.Name = structs.DiffTypeAdded, new.Name
		nv = reflect.ValueOf(new).Elem()
	case new == nil:
		t.Type, t.Name = structs.DiffTypeDeleted, old.Name
		ov = reflect.ValueOf(old).Elem()
	default:
		t.Name = new.Name
		ov, nv = reflect.ValueOf(old).Elem(), reflect.ValueOf(new).Elem()
	}
	t.Fields, t.Objects = diffStruct(ov, nv, taskDiffSkip)
	if t.Type == structs.DiffTypeEdited && len(t.Fields) == 0 && len(t.Objects) == 0 {
		return nil
	}
	// As Nomad annotates them: a new task is created, a removed one
	// destroyed, and any change to a task replaces its allocations.
	switch t.Type {
	case structs.DiffTypeAdded:
		t.Annotations = []string{"forces create"}
	case structs.DiffTypeDeleted:
		t.Annotations = []string{"forces destroy"}
	case structs.DiffTypeEdited:
		t.Annotations = []string{"forces create/destroy update"}
	}
	return t
}

// diffStruct compares two structs of the same type field by field; an
// invalid value stands for an absent struct.
func diffStruct(old, new reflect.Value, skip map[string]bool) ([]*structs.FieldDiff, []*structs.ObjectDiff) {
	var t reflect.Type
	if old.IsValid() {
		t = old.Type()
	} else {
		t = new.Type()
	}
	var fields []*structs.FieldDiff
	var objects []*structs.ObjectDiff
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || skip[f.Name] {
			continue
		}
		var o, n reflect.Value
		if old.IsValid() {
			o = old.Field(i)
		}
		if new.IsValid() {
			n = new.Field(i)
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			o, n = derefStruct(o), derefStruct(n)
			if od := objectDiff(f.Name, o, n); od != nil {
				objects = append(objects, od)
			}
			continue
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() {
			if od := objectDiff(f.Name, o, n); od != nil {
				objects = append(objects, od)
			}
			continue
		}
		if isScalar(ft) {
			if fd := fieldDiff(f.Name, scalarString(o), scalarString(n)); fd != nil {
				fields = append(fields, fd)
			}
			continue
		}
		// Slices and maps: flatten to key -> value and compare per key.
		om, nm := map[string]string{}, map[string]string{}
		if o.IsValid() {
			flatten(f.Name, o.Interface(), om)
		}
		if n.IsValid() {
			flatten(f.Name, n.Interface(), nm)
		}
		if od := flatObjectDiff(f.Name, om, nm, o.IsValid() && !o.IsZero(), n.IsValid() && !n.IsZero()); od != nil {
			objects = append(objects, od)
		}
	}
	return fields, objects
}

func derefStruct(v reflect.Value) reflect.Value {
	if !v.IsValid() || v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

func objectDiff(name string, o, n reflect.Value) *structs.ObjectDiff {
	if !o.IsValid() && !n.IsValid() {
		return nil
	}
	od := &structs.ObjectDiff{Name: name, Type: structs.DiffTypeEdited}
	switch {
	case !o.IsValid():
		od.Type = structs.DiffTypeAdded
	case !n.IsValid():
		od.Type = structs.DiffTypeDeleted
	}
	od.Fields, od.Objects = diffStruct(o, n, nil)
	if len(od.Fields) == 0 && len(od.Objects) == 0 {
		return nil
	}
	return od
}

func flatObjectDiff(name string, om, nm map[string]string, hadOld, hasNew bool) *structs.ObjectDiff {
	keys := map[string]bool{}
	for k := range om {
		keys[k] = true
	}
	for k := range nm {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	od := &structs.ObjectDiff{Name: name, Type: structs.DiffTypeEdited}
	switch {
	case !hadOld && hasNew:
		od.Type = structs.DiffTypeAdded
	case hadOld && !hasNew:
		od.Type = structs.DiffTypeDeleted
	}
	for _, k := range sorted {
		ov, inOld := om[k]
		nv, inNew := nm[k]
		fd := &structs.FieldDiff{Name: k, Old: ov, New: nv}
		switch {
		case inOld && inNew && ov == nv:
			continue
		case !inOld:
			fd.Type = structs.DiffTypeAdded
		case !inNew:
			fd.Type = structs.DiffTypeDeleted
		default:
			fd.Type = structs.DiffTypeEdited
		}
		od.Fields = append(od.Fields, fd)
	}
	if len(od.Fields) == 0 {
		return nil
	}
	return od
}

func fieldDiff(name string, o, n *string) *structs.FieldDiff {
	switch {
	case o == nil && n == nil:
		return nil
	case o == nil:
		return &structs.FieldDiff{Type: structs.DiffTypeAdded, Name: name, New: *n}
	case n == nil:
		return &structs.FieldDiff{Type: structs.DiffTypeDeleted, Name: name, Old: *o}
	case *o == *n:
		return nil
	}
	return &structs.FieldDiff{Type: structs.DiffTypeEdited, Name: name, Old: *o, New: *n}
}

func isScalar(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return t == reflect.TypeFor[time.Time]()
}

// scalarString renders a scalar as Nomad's diffs do (durations as
// nanoseconds); nil for an absent value. A zero value of a non-pointer
// field in an absent struct is absent too.
func scalarString(v reflect.Value) *string {
	if !v.IsValid() {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	var s string
	switch v.Kind() {
	case reflect.String:
		s = v.String()
	case reflect.Bool:
		s = strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s = strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s = strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		s = strconv.FormatFloat(v.Float(), 'g', -1, 64)
	default:
		s = fmt.Sprint(v.Interface())
	}
	return &s
}

// flatten turns nested maps, slices and structs into "a.b[0].c" keys.
func flatten(prefix string, v any, out map[string]string) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return
	}
	if rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return
		}
		flatten(prefix, rv.Elem().Interface(), out)
		return
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch rv.Kind() {
	case reflect.Map:
		for _, k := range rv.MapKeys() {
			flatten(join(fmt.Sprint(k.Interface())), rv.MapIndex(k).Interface(), out)
		}
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			// An empty payload is no payload: a job with none is
			// not "edited" into one with an empty one.
			if rv.Len() > 0 {
				out[prefix] = string(rv.Bytes())
			}
			return
		}
		for i := 0; i < rv.Len(); i++ {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), rv.Index(i).Interface(), out)
		}
	case reflect.Struct:
		if t, ok := v.(time.Time); ok {
			out[prefix] = t.String()
			return
		}
		for i := 0; i < rv.NumField(); i++ {
			if rv.Type().Field(i).IsExported() {
				flatten(join(rv.Type().Field(i).Name), rv.Field(i).Interface(), out)
			}
		}
	default:
		if s := scalarString(rv); s != nil {
			if prefix == "" {
				prefix = "value"
			}
			out[prefix] = *s
		}
	}
}
