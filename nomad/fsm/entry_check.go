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
// groups and tasks of the jobs among them (checkObject): that is where
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
				if err := checkObject(name, field.Interface()); err != nil {
					return err
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
				if err := checkObject(fmt.Sprintf("%s[%d]", name, j), elem.Interface()); err != nil {
					return err
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

// checkObject refuses a job, or an allocation's job, with a nil task
// group or task: the state store walks both lists of every job it
// writes (its summary has an entry per group).
func checkObject(name string, obj any) error {
	var job *structs.Job
	switch o := obj.(type) {
	case *structs.Job:
		job = o
	case *structs.Allocation:
		job, name = o.Job, name+".Job"
	}
	if job == nil {
		return nil
	}
	for i, tg := range job.TaskGroups {
		if tg == nil {
			return fmt.Errorf("%s.TaskGroups[%d] is nil", name, i)
		}
		for k, task := range tg.Tasks {
			if task == nil {
				return fmt.Errorf("%s.TaskGroups[%d].Tasks[%d] is nil", name, i, k)
			}
		}
	}
	return nil
}

// missing is the answer to an entry without the object it writes.
func missing(msgType structs.MessageType, field string) error {
	return fmt.Errorf("fsm: decode %s: %s is nil", msgType, field)
}
