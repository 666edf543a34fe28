package fsm

import (
	"fmt"
	"reflect"

	"github.com/nomadq/nomadq/structs"
)

// checkEntries refuses a decoded request that holds a nil in one of its
// lists or maps of objects. Every server writes such an entry's objects
// by dereferencing them, so a nil one (a damaged or hostile log entry;
// msgpack's nil decodes without error) would panic the FSM on every
// server alike; it is answered with an error instead, as an entry that
// does not decode is. Only the request's own fields are checked, and the
// groups and tasks of the jobs among them (nilInObject): that is where
// the writers put what they write, and a check is then as cheap as the
// number of objects in the entry.
func checkEntries(req any) error {
	v := reflect.ValueOf(req)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	t := v.Type()
	for i := range t.NumField() {
		field := v.Field(i)
		name := t.Field(i).Name
		switch field.Kind() {
		case reflect.Pointer:
			if !field.IsNil() && field.CanInterface() {
				if at := nilInObject(field.Interface()); at != "" {
					return fmt.Errorf("%s%s is nil", name, at)
				}
			}
		case reflect.Slice:
			if field.Type().Elem().Kind() != reflect.Pointer {
				continue
			}
			for j := range field.Len() {
				elem := field.Index(j)
				if elem.IsNil() {
					return fmt.Errorf("%s[%d] is nil", name, j)
				}
				if at := nilInObject(elem.Interface()); at != "" {
					return fmt.Errorf("%s[%d]%s is nil", name, j, at)
				}
			}
		case reflect.Map:
			if field.Type().Elem().Kind() != reflect.Pointer {
				continue
			}
			iter := field.MapRange()
			for iter.Next() {
				if iter.Value().IsNil() {
					return fmt.Errorf("%s[%v] is nil", name, iter.Key())
				}
			}
		}
	}
	return nil
}

// nilInObject returns where a job, or an allocation's job, holds a nil
// task group or task (".TaskGroups[1]"), or "": the state store walks
// both lists of every job it writes (its summary has an entry per
// group).
func nilInObject(obj any) string {
	var job *structs.Job
	prefix := ""
	switch o := obj.(type) {
	case *structs.Job:
		job = o
	case *structs.Allocation:
		job, prefix = o.Job, ".Job"
	}
	if job == nil {
		return ""
	}
	for i, tg := range job.TaskGroups {
		if tg == nil {
			return fmt.Sprintf("%s.TaskGroups[%d]", prefix, i)
		}
		for k, task := range tg.Tasks {
			if task == nil {
				return fmt.Sprintf("%s.TaskGroups[%d].Tasks[%d]", prefix, i, k)
			}
		}
	}
	return ""
}

// missing is the answer to an entry without the object it writes.
func missing(msgType structs.MessageType, field string) error {
	return fmt.Errorf("fsm: decode %s: %s is nil", msgType, field)
}
