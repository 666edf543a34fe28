package state

import (
	"fmt"
	"strings"
)

// stringsIndex keys an object by up to three string fields, each followed
// by a NUL: the key go-memdb's CompoundIndex of StringFieldIndexes makes,
// built without reflection in one allocation. The hot tables (the index
// table on every write, jobs, summaries, evals) used those indexers, and
// their reflection and per-field allocations were a seventh of the store's
// allocations in a small batch job's life (BenchmarkSmallJobLifecycle).
//
// The semantics are CompoundIndex's: an empty field leaves the object out
// of the index, or, with allowMissing, ends the key there; FromArgs takes
// one string per field; PrefixFromArgs takes at most that many, the last
// one a prefix (no NUL after it).
type stringsIndex struct {
	name         string
	n            int
	allowMissing bool
	lower        bool // lowercase the first field, as StringFieldIndex's Lowercase
	// room is spare capacity for the row ID go-memdb appends to the
	// key of a non-unique index (0 for a unique one: the radix tree
	// keeps the key's whole array).
	room   int
	fields func(obj any) ([3]string, error)
}

func (x *stringsIndex) FromObject(obj any) (bool, []byte, error) {
	f, err := x.fields(obj)
	if err != nil {
		return false, nil, err
	}
	if x.lower {
		f[0] = strings.ToLower(f[0])
	}
	size := 0
	for i := range x.n {
		size += len(f[i]) + 1
	}
	key := make([]byte, 0, size+x.room)
	for i := range x.n {
		if f[i] == "" {
			if x.allowMissing {
				break
			}
			return false, nil, nil
		}
		key = append(key, f[i]...)
		key = append(key, 0)
	}
	if len(key) == 0 {
		key = nil // as CompoundIndex: the first field was missing
	}
	return true, key, nil
}

func (x *stringsIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != x.n {
		return nil, fmt.Errorf("%s: want %d arguments, got %d", x.name, x.n, len(args))
	}
	return x.join(args, true)
}

func (x *stringsIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) > x.n {
		return nil, fmt.Errorf("%s: want at most %d arguments, got %d", x.name, x.n, len(args))
	}
	return x.join(args, false)
}

func (x *stringsIndex) join(args []any, whole bool) ([]byte, error) {
	if x.lower && len(args) > 0 {
		s, err := stringArg(x.name, args[0])
		if err != nil {
			return nil, err
		}
		args = append([]any{strings.ToLower(s)}, args[1:]...)
	}
	return joinArgs(x.name, args, whole)
}
