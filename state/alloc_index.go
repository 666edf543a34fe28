package state

import (
	"fmt"

	"github.com/nomadq/nomadq/structs"
)

// The allocs table's node and job indexes. Their keys are those memdb's
// CompoundIndex builds from StringFieldIndex and ConditionalIndex parts
// (each string followed by a NUL, a flag as one byte 0 or 1), so lookups
// and prefix scans mean what they always did; but they are read from the
// fields directly instead of by reflection, and built in one slice with
// room for the alloc's ID key, which memdb appends to every key of a
// non-unique index: the compound index allocated each part, the joined
// key, then the key again with the ID.

// allocIDKeyLen is the length of an alloc's key in the id index (a digit
// per byte, see uuidIndex), the suffix memdb appends.
const allocIDKeyLen = 32

// allocNodeIndex keys an alloc by NodeID and whether it is terminal. An
// alloc without a node is not indexed.
type allocNodeIndex struct{}

func (allocNodeIndex) FromObject(obj any) (bool, []byte, error) {
	a, ok := obj.(*structs.Allocation)
	if !ok {
		return false, nil, fmt.Errorf("node index: unexpected type %T", obj)
	}
	if a.NodeID == "" {
		return false, nil, nil
	}
	key := make([]byte, 0, len(a.NodeID)+2+allocIDKeyLen)
	key = append(key, a.NodeID...)
	return true, append(key, 0, flagByte(a.TerminalStatus())), nil
}

// FromArgs takes the node ID and the terminal flag.
func (allocNodeIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("node index: want a node ID and a terminal flag, got %d arguments", len(args))
	}
	id, err := stringArg("node index", args[0])
	if err != nil {
		return nil, err
	}
	terminal, ok := args[1].(bool)
	if !ok {
		return nil, fmt.Errorf("node index: the terminal flag must be a bool, got %T", args[1])
	}
	return append([]byte(id), 0, flagByte(terminal)), nil
}

// PrefixFromArgs takes a node ID prefix (the flag cannot be a prefix).
func (allocNodeIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("node index: a prefix scan takes a node ID prefix alone, got %d arguments", len(args))
	}
	id, err := stringArg("node index", args[0])
	return []byte(id), err
}

// allocJobIndex keys an alloc by Namespace and JobID; both must be set.
type allocJobIndex struct{}

func (allocJobIndex) FromObject(obj any) (bool, []byte, error) {
	a, ok := obj.(*structs.Allocation)
	if !ok {
		return false, nil, fmt.Errorf("job index: unexpected type %T", obj)
	}
	if a.Namespace == "" || a.JobID == "" {
		return false, nil, nil
	}
	key := make([]byte, 0, len(a.Namespace)+len(a.JobID)+2+allocIDKeyLen)
	key = append(key, a.Namespace...)
	key = append(key, 0)
	key = append(key, a.JobID...)
	return true, append(key, 0), nil
}

// FromArgs takes the namespace and the job ID.
func (allocJobIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("job index: want a namespace and a job ID, got %d arguments", len(args))
	}
	return joinArgs("job index", args, true)
}

// PrefixFromArgs takes a namespace prefix, or a namespace and a job ID
// prefix ("" for every job of the namespace).
func (allocJobIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, fmt.Errorf("job index: want a namespace and at most a job ID prefix, got %d arguments", len(args))
	}
	return joinArgs("job index", args, false)
}

// joinArgs joins string arguments, each followed by a NUL; the last one's
// NUL is left off for a prefix.
func joinArgs(index string, args []any, whole bool) ([]byte, error) {
	var key []byte
	for i, arg := range args {
		s, err := stringArg(index, arg)
		if err != nil {
			return nil, err
		}
		key = append(key, s...)
		if whole || i < len(args)-1 {
			key = append(key, 0)
		}
	}
	return key, nil
}

func stringArg(index string, arg any) (string, error) {
	s, ok := arg.(string)
	if !ok {
		return "", fmt.Errorf("%s: argument must be a string, got %T", index, arg)
	}
	return s, nil
}

func flagByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
