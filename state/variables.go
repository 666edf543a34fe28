package state

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableVariables holds the variables, encrypted, keyed by namespace and
// path.
const TableVariables = "variables"

// variableRecord is the snapshot record of a variable, Nomad's snapshot
// type for the table.
const variableRecord recordType = 22

func init() {
	snapshotTables = append(snapshotTables, struct {
		table  string
		record recordType
		newRow func() any
	}{TableVariables, variableRecord, func() any { return new(structs.VariableEncrypted) }})
}

func variableTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableVariables,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "Path"},
				}},
			},
			"keyid": {
				Name:    "keyid",
				Indexer: &memdb.StringFieldIndex{Field: "KeyID"},
			},
		},
	}
}

// VariableByPath returns the variable, or nil.
func (r *reader) VariableByPath(ws memdb.WatchSet, namespace, path string) (*structs.VariableEncrypted, error) {
	return variableByPath(r.db.Txn(false), ws, namespace, path)
}

func variableByPath(txn *memdb.Txn, ws memdb.WatchSet, namespace, path string) (*structs.VariableEncrypted, error) {
	watchCh, raw, err := txn.FirstWatch(TableVariables, "id", namespace, path)
	if err != nil {
		return nil, fmt.Errorf("variable lookup %s@%s: %w", path, namespace, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.VariableEncrypted), nil
}

// VariablesByPrefix returns the variables of namespace ("*": every
// namespace) whose path starts with prefix, ordered by namespace and path.
func (r *reader) VariablesByPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.VariableEncrypted, error) {
	txn := r.db.Txn(false)
	var iter memdb.ResultIterator
	var err error
	if namespace == "*" {
		iter, err = txn.Get(TableVariables, "id")
	} else {
		iter, err = txn.Get(TableVariables, "id_prefix", namespace, prefix)
	}
	if err != nil {
		return nil, fmt.Errorf("list variables with prefix %q: %w", prefix, err)
	}
	return collect(ws, iter, func(v *structs.VariableEncrypted) bool {
		return strings.HasPrefix(v.Path, prefix)
	}), nil
}

// VariablesByKeyID returns the variables sealed with root key keyID.
func (r *reader) VariablesByKeyID(ws memdb.WatchSet, keyID string) ([]*structs.VariableEncrypted, error) {
	iter, err := r.db.Txn(false).Get(TableVariables, "keyid", keyID)
	if err != nil {
		return nil, fmt.Errorf("list variables of key %q: %w", keyID, err)
	}
	return collect[*structs.VariableEncrypted](ws, iter, nil), nil
}

// ApplyVariable performs one variable write in one transaction and
// reports whether it was done or conflicted. A conflict writes nothing and
// is not an error: the caller shows the stored variable to the user.
//
//   - set: writes the variable; on a locked variable only the lock's
//     holder (Var.Lock.ID) may, and the lock stays.
//   - cas: as set, when Var.ModifyIndex is the stored one (0: must not
//     exist).
//   - delete, delete-cas: as set and cas, removing the variable; deleting
//     one that does not exist is done.
//   - lock-acquire: takes the lock Var.Lock on an unlocked or new
//     variable; without Data the stored items stay.
//   - lock-release: drops the lock when Var.Lock.ID holds it.
func (s *StateStore) ApplyVariable(index uint64, op structs.VarOp, v *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	var resp *structs.VarApplyStateResponse
	err := s.write(index, func(tx *writeTxn) error {
		var err error
		resp, err = tx.applyVariable(op, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (tx *writeTxn) applyVariable(op structs.VarOp, v *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	if v == nil {
		return nil, fmt.Errorf("variable %s: missing variable", op)
	}
	existing, err := variableByPath(tx.Txn, nil, v.Namespace, v.Path)
	if err != nil {
		return nil, err
	}
	conflict := func() (*structs.VarApplyStateResponse, error) {
		return &structs.VarApplyStateResponse{Result: structs.VarOpResultConflict, Conflict: existing.Copy()}, nil
	}
	// A locked variable is the lock holder's alone.
	lockedOut := existing != nil && existing.Lock != nil && existing.Lock.ID != v.LockID()

	switch op {
	case structs.VarOpCAS, structs.VarOpDeleteCAS:
		if existing == nil && v.ModifyIndex != 0 || existing != nil && existing.ModifyIndex != v.ModifyIndex {
			return conflict()
		}
	}
	switch op {
	case structs.VarOpSet, structs.VarOpCAS:
		if lockedOut {
			return conflict()
		}
		out := v.Copy()
		out.Lock = nil
		if existing != nil {
			out.Lock = existing.Lock.Copy()
		}
		return tx.putVariable(out, existing)
	case structs.VarOpDelete, structs.VarOpDeleteCAS:
		if existing == nil {
			return &structs.VarApplyStateResponse{Result: structs.VarOpResultOk}, nil
		}
		if lockedOut {
			return conflict()
		}
		if err := tx.Delete(TableVariables, existing); err != nil {
			return nil, fmt.Errorf("delete variable %s@%s: %w", v.Path, v.Namespace, err)
		}
		tx.touch(TableVariables)
		return &structs.VarApplyStateResponse{Result: structs.VarOpResultOk}, nil
	case structs.VarOpLockAcquire:
		if v.Lock == nil || v.Lock.ID == "" {
			return nil, fmt.Errorf("variable %s@%s: lock-acquire without a lock", v.Path, v.Namespace)
		}
		if existing != nil && existing.Lock != nil {
			return conflict()
		}
		out := v.Copy()
		if len(out.Data) == 0 && existing != nil {
			out.Data, out.KeyID = existing.Data, existing.KeyID
		}
		return tx.putVariable(out, existing)
	case structs.VarOpLockRelease:
		if existing == nil || existing.Lock == nil || lockedOut {
			return conflict()
		}
		out := existing.Copy()
		out.Lock = nil
		out.ModifyTime = v.ModifyTime
		return tx.putVariable(out, existing)
	}
	return nil, fmt.Errorf("variable %s@%s: unknown operation %q", v.Path, v.Namespace, op)
}

// putVariable stores v, keeping the creation fields of the variable it
// replaces.
func (tx *writeTxn) putVariable(v, existing *structs.VariableEncrypted) (*structs.VarApplyStateResponse, error) {
	v.CreateIndex, v.ModifyIndex = tx.index, tx.index
	if existing != nil {
		v.CreateIndex, v.CreateTime = existing.CreateIndex, existing.CreateTime
	}
	if err := tx.Insert(TableVariables, v); err != nil {
		return nil, fmt.Errorf("write variable %s@%s: %w", v.Path, v.Namespace, err)
	}
	tx.touch(TableVariables)
	return &structs.VarApplyStateResponse{Result: structs.VarOpResultOk, Written: v.Copy()}, nil
}

// rootKeySealsVariables refuses to lose the key variables are sealed with.
func (tx *writeTxn) rootKeySealsVariables(keyID string) error {
	iter, err := tx.Get(TableVariables, "keyid", keyID)
	if err != nil {
		return fmt.Errorf("root key %q: list its variables: %w", keyID, err)
	}
	n := 0
	var first *structs.VariableEncrypted
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if first == nil {
			first = raw.(*structs.VariableEncrypted)
		}
		n++
	}
	if n > 0 {
		return fmt.Errorf("root key %q is in use and %w: %d variable(s) are encrypted with it, the first %s in namespace %s", keyID, ErrRootKeyKept, n, first.Path, first.Namespace)
	}
	return nil
}
