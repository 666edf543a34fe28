package apiconv

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// ruleKind is how nomadq treats one field of an api type; see fields.
type ruleKind int

const (
	kindMapped ruleKind = iota + 1
	kindRefused
	kindWarned
	kindFixed
	kindIgnored
)

// rule is one line of the fields table.
type rule struct {
	kind ruleKind
	// values are what a fixed field may be set to.
	values []any
	// reason says why an ignored field carries no meaning.
	reason string
	// warning is what a warned field is answered with.
	warning string
}

var (
	mapped  = rule{kind: kindMapped}
	refused = rule{kind: kindRefused}
	warned  = rule{kind: kindWarned, warning: rolloutWarning}
)

// warnedWith accepts a field with the given warning in the register, plan
// and validate answers.
func warnedWith(warning string) rule { return rule{kind: kindWarned, warning: warning} }

// fixed accepts a field only when it is unset or holds one of values.
func fixed(values ...any) rule { return rule{kind: kindFixed, values: values} }

// ignored accepts a field whatever it holds; reason says why that is right.
func ignored(reason string) rule { return rule{kind: kindIgnored, reason: reason} }

// rolloutWarning is what update blocks are answered with.
const rolloutWarning = "rolling updates and canaries are not implemented by nomadq; an update replaces every alloc at once"

// diskWarning is what a task's resources disk is answered with: Nomad
// deprecated it and ignores it, and so does nomadq.
const diskWarning = "resources disk is deprecated and ignored, as in Nomad: the group's ephemeral_disk size is the disk its tasks get"

// Check refuses a submitted job that sets a field nomadq would not act on,
// naming each such field, and returns the warnings for the fields it
// accepts with a caveat (update). It reads the job as the
// user wrote it, before api.Job.Canonicalize fills in defaults, and does
// not change it.
//
// A field is set when it holds a non-zero value: a nil pointer, a pointer
// to a zero value and an empty slice or map are unset, so `sticky = false`
// is accepted where `sticky = true` is refused. A pointer to a block is set
// even when the block is empty (`vault {}`).
func Check(j *api.Job) (warnings []string, err error) {
	if j == nil {
		return nil, nil
	}
	c := &checker{jobType: deref(j.Type)}
	c.walk(reflect.ValueOf(j).Elem(), fmt.Sprintf("job %q", jobName(j)), "")
	c.checkDefaultIdentities(j)
	c.checkUsers(j)
	return c.warnings, c.errs.ErrorOrNil()
}

func jobName(j *api.Job) string {
	if id := deref(j.ID); id != "" {
		return id
	}
	return deref(j.Name)
}

type checker struct {
	jobType  string
	errs     structs.MultiError
	warnings []string
}

var (
	taskGroupType = reflect.TypeFor[api.TaskGroup]()
	taskType      = reflect.TypeFor[api.Task]()
	apiPkg        = taskType.PkgPath()
)

// fieldPlan is what walk needs about one exported field of an api
// struct, worked out once per type: the field, its rule, and whether a
// value of its type can hold api structs to descend into.
type fieldPlan struct {
	index int
	field reflect.StructField
	rule  rule
	holds bool
}

// plans caches the fields of each api struct type walk has met
// (map[reflect.Type][]fieldPlan): a job is checked on every registration,
// and looking each field's rule up by name cost more than the check.
var plans sync.Map

func planOf(t reflect.Type) []fieldPlan {
	if p, ok := plans.Load(t); ok {
		return p.([]fieldPlan)
	}
	var p []fieldPlan
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		r, ok := fields[t.Name()+"."+f.Name]
		if !ok {
			// A field the api module gained after this table was written:
			// nothing maps it, so it must not pass silently.
			r = refused
		}
		p = append(p, fieldPlan{index: i, field: f, rule: r, holds: holdsAPIStruct(f.Type)})
	}
	plans.Store(t, p)
	return p
}

// holdsAPIStruct reports whether a value of type t can hold a struct of
// the api package, which descend would walk: through pointers, slices,
// arrays and map values, not interfaces (JSON never decodes an api struct
// into one).
func holdsAPIStruct(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsAPIStruct(t.Elem())
	case reflect.Struct:
		return t.PkgPath() == apiPkg
	}
	return false
}

// walk checks every set field of the api struct v. where names the job,
// group or task the struct belongs to; path is its place below that. The
// struct's own fields are checked before the blocks inside it, so that a
// job's refusals read from the job down to its tasks.
func (c *checker) walk(v reflect.Value, where, path string) {
	type inner struct {
		v    reflect.Value
		path string
	}
	var blocks []inner
	for _, fp := range planOf(v.Type()) {
		fv := v.Field(fp.index)
		r := fp.rule
		if !isSet(fv) && (r.kind != kindFixed || fv.Kind() != reflect.Pointer || fv.IsNil()) {
			// A fixed field behind a pointer is checked whenever it is
			// present: logs { enabled = false } means something.
			continue
		}
		if r.kind == kindIgnored || (!fp.holds && r.kind == kindMapped) {
			continue
		}
		p := fp.field.Name
		if path != "" {
			p = path + "." + fp.field.Name
		}
		switch r.kind {
		case kindRefused:
			c.errs.Add(fmt.Errorf("%s: field %q is not supported by nomadq", where, p))
			continue
		case kindFixed:
			if !r.allows(fv) {
				c.errs.Add(fmt.Errorf("%s: field %q = %s is not supported by nomadq: only %s is accepted", where, p, show(fv), showAll(r.values)))
				continue
			}
		case kindWarned:
			c.warn(where, p, fp.field, r.warning)
		}
		if fp.holds {
			blocks = append(blocks, inner{fv, p})
		}
	}
	// Groups and tasks last: a group's network is named before its
	// tasks' fields.
	sort.SliceStable(blocks, func(a, b int) bool {
		return !holdsWorkload(blocks[a].v.Type()) && holdsWorkload(blocks[b].v.Type())
	})
	for _, b := range blocks {
		c.descend(b.v, where, b.path)
	}
}

// descend walks the api structs inside a field's value.
func (c *checker) descend(v reflect.Value, where, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.descend(v.Elem(), where, path)
		}
	case reflect.Struct:
		if v.Type().PkgPath() == apiPkg {
			c.walk(v, where, path)
		}
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			switch derefType(e.Type()) {
			case taskGroupType:
				if !e.IsNil() {
					c.walk(e.Elem(), fmt.Sprintf("%s group %q", where, deref(e.Interface().(*api.TaskGroup).Name)), "")
				}
			case taskType:
				if !e.IsNil() {
					c.walk(e.Elem(), fmt.Sprintf("%s task %q", where, e.Interface().(*api.Task).Name), "")
				}
			default:
				c.descend(e, where, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(a, b int) bool { return fmt.Sprint(keys[a]) < fmt.Sprint(keys[b]) })
		for _, k := range keys {
			c.descend(v.MapIndex(k), where, fmt.Sprintf("%s[%q]", path, fmt.Sprint(k)))
		}
	}
}

// warn records a warned field's warning. The rollout warning is given
// for the update block; in a batch or sysbatch job update means nothing
// at all, which structs.Job.Warnings says instead. Other warnings name
// the field by its place in the job file (resources disk).
func (c *checker) warn(where, path string, f reflect.StructField, warning string) {
	var w string
	if warning == rolloutWarning {
		block := hclName(f)
		if block == "update" && (c.jobType == structs.JobTypeBatch || c.jobType == structs.JobTypeSysBatch) {
			return
		}
		w = fmt.Sprintf("%s: %s block: %s", where, block, warning)
	} else {
		w = fmt.Sprintf("%s: field %q: %s", where, path, warning)
	}
	if !slices.Contains(c.warnings, w) {
		c.warnings = append(c.warnings, w)
	}
}

// checkDefaultIdentities refuses a task with more than one default
// identity block: only one can be signed, and the others would be lost.
func (c *checker) checkDefaultIdentities(j *api.Job) {
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		for _, t := range tg.Tasks {
			if t == nil {
				continue
			}
			n := 0
			if t.Identity != nil {
				n++
			}
			for _, wi := range t.Identities {
				if wi != nil && (wi.Name == "" || wi.Name == structs.WorkloadIdentityDefaultName) {
					n++
				}
			}
			if n > 1 {
				c.errs.Add(fmt.Errorf("job %q group %q task %q: %d default identity blocks (no name, or \"default\"); only one is allowed", jobName(j), deref(tg.Name), t.Name, n))
			}
		}
	}
}

// usersIgnoredBy are the built-in drivers that run every task as the
// client's user: a task user there would be dropped. The exec driver
// honours it; a driver nomadq does not have fails placement instead.
var usersIgnoredBy = []string{"raw_exec", "mock_driver"}

// checkUsers refuses a task user that its driver would not apply.
func (c *checker) checkUsers(j *api.Job) {
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		for _, t := range tg.Tasks {
			if t != nil && t.User != "" && slices.Contains(usersIgnoredBy, t.Driver) {
				c.errs.Add(fmt.Errorf("job %q group %q task %q: field \"User\" is not supported by nomadq with driver %q: the task would run as the client's user; the exec driver runs tasks as another user", jobName(j), deref(tg.Name), t.Name, t.Driver))
			}
		}
	}
}

// allows reports whether a fixed field's value is one of the rule's.
func (r rule) allows(v reflect.Value) bool {
	v = derefValue(v)
	return slices.ContainsFunc(r.values, func(a any) bool { return reflect.DeepEqual(v.Interface(), a) })
}

// isSet reports whether a field holds something a user wrote.
func isSet(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return false
		}
		return v.Elem().Kind() == reflect.Struct || isSet(v.Elem())
	case reflect.Slice, reflect.Map:
		return v.Len() > 0
	case reflect.Interface:
		return !v.IsNil()
	}
	return !v.IsZero()
}

// holdsWorkload reports whether t is a list of task groups or of tasks.
func holdsWorkload(t reflect.Type) bool {
	if t.Kind() != reflect.Slice {
		return false
	}
	e := derefType(t.Elem())
	return e == taskGroupType || e == taskType
}

func derefValue(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// hclName is the name a field has in a job file.
func hclName(f reflect.StructField) string {
	if name, _, _ := strings.Cut(f.Tag.Get("hcl"), ","); name != "" {
		return name
	}
	return strings.ToLower(f.Name)
}

func show(v reflect.Value) string {
	return showValue(derefValue(v).Interface())
}

func showValue(x any) string {
	switch x := x.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(x)
}

func showAll(values []any) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = showValue(v)
	}
	return strings.Join(out, " or ")
}
