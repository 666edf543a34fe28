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
// does not decode is. Only the request's own fields are checked: that is
// where the writers put what they write, and a check is then as cheap as
// the number of objects in the entry.
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
		switch field.Kind() {
		case reflect.Slice:
			if field.Type().Elem().Kind() != reflect.Pointer {
				continue
			}
			for j := range field.Len() {
				if field.Index(j).IsNil() {
					return fmt.Errorf("%s[%d] is nil", t.Field(i).Name, j)
				}
			}
		case reflect.Map:
			if field.Type().Elem().Kind() != reflect.Pointer {
				continue
			}
			iter := field.MapRange()
			for iter.Next() {
				if iter.Value().IsNil() {
					return fmt.Errorf("%s[%v] is nil", t.Field(i).Name, iter.Key())
				}
			}
		}
	}
	return nil
}

// missing is the answer to an entry without the object it writes.
func missing(msgType structs.MessageType, field string) error {
	return fmt.Errorf("fsm: decode %s: %s is nil", msgType, field)
}
