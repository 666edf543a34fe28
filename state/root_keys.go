package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableRootKeys holds the root keyring: every root key with its material.
const TableRootKeys = "root_keys"

func rootKeyTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableRootKeys,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: &memdb.UUIDFieldIndex{Field: "KeyID"},
			},
			"state": {
				Name:    "state",
				Indexer: &memdb.StringFieldIndex{Field: "State"},
			},
		},
	}
}

// RootKeys returns every root key, ordered by KeyID.
func (r *reader) RootKeys(ws memdb.WatchSet) ([]*structs.RootKey, error) {
	iter, err := r.db.Txn(false).Get(TableRootKeys, "id")
	if err != nil {
		return nil, fmt.Errorf("root keys: %w", err)
	}
	return collect[*structs.RootKey](ws, iter, nil), nil
}

// RootKeyByID returns one root key, or nil.
func (r *reader) RootKeyByID(ws memdb.WatchSet, id string) (*structs.RootKey, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableRootKeys, "id", id)
	if err != nil {
		return nil, fmt.Errorf("root key %q: %w", id, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.RootKey), nil
}

// ActiveRootKey returns the key that signs new identities, or nil before
// the first leader has written one.
func (r *reader) ActiveRootKey(ws memdb.WatchSet) (*structs.RootKey, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableRootKeys, "state", string(structs.RootKeyStateActive))
	if err != nil {
		return nil, fmt.Errorf("active root key: %w", err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.RootKey), nil
}

// UpsertRootKey stores a root key. An active key makes every other active
// key inactive in the same transaction, so that exactly one key signs.
// Re-writing a stored key keeps its CreateIndex.
func (s *StateStore) UpsertRootKey(index uint64, key *structs.RootKey) error {
	return s.upsertRootKey(index, key, structs.RootKeyStateInactive)
}

// UpsertRootKeyRekey stores a root key as UpsertRootKey does, but the key
// it replaces as the active one becomes rekeying, not inactive: a full
// rotation, after which the leader re-encrypts that key's variables.
func (s *StateStore) UpsertRootKeyRekey(index uint64, key *structs.RootKey) error {
	return s.upsertRootKey(index, key, structs.RootKeyStateRekeying)
}

func (s *StateStore) upsertRootKey(index uint64, key *structs.RootKey, demoteTo structs.RootKeyState) error {
	if key == nil || key.KeyID == "" {
		return errors.New("upsert root key: key ID is required")
	}
	return s.write(index, func(tx *writeTxn) error {
		raw, err := tx.First(TableRootKeys, "id", key.KeyID)
		if err != nil {
			return fmt.Errorf("upsert root key %q: %w", key.KeyID, err)
		}
		key.CreateIndex = index
		if raw != nil {
			key.CreateIndex = raw.(*structs.RootKey).CreateIndex
		}
		key.ModifyIndex = index
		if key.IsActive() {
			iter, err := tx.Get(TableRootKeys, "state", string(structs.RootKeyStateActive))
			if err != nil {
				return fmt.Errorf("upsert root key %q: %w", key.KeyID, err)
			}
			var demote []*structs.RootKey
			for raw := iter.Next(); raw != nil; raw = iter.Next() {
				if k := raw.(*structs.RootKey); k.KeyID != key.KeyID {
					demote = append(demote, k)
				}
			}
			for _, k := range demote {
				c := k.Copy()
				c.State = demoteTo
				c.ModifyIndex = index
				if err := tx.Insert(TableRootKeys, c); err != nil {
					return fmt.Errorf("upsert root key: make %q %s: %w", k.KeyID, demoteTo, err)
				}
			}
		}
		if err := tx.Insert(TableRootKeys, key); err != nil {
			return fmt.Errorf("upsert root key %q: %w", key.KeyID, err)
		}
		tx.touch(TableRootKeys)
		return nil
	})
}

// ErrRootKeyKept is wrapped by DeleteRootKey's refusals: the key is the
// active one, or variables are sealed with it.
var ErrRootKeyKept = errors.New("cannot be deleted")

// DeleteRootKey removes a root key. The active key cannot be deleted:
// identities would have nothing to be signed with; nor can a key that
// variables are sealed with, force or not: they could never be read
// again.
func (s *StateStore) DeleteRootKey(index uint64, id string) error {
	return s.write(index, func(tx *writeTxn) error {
		raw, err := tx.First(TableRootKeys, "id", id)
		if err != nil {
			return fmt.Errorf("delete root key %q: %w", id, err)
		}
		if raw == nil {
			return structs.NewErrNotFoundf("root key %q not found", id)
		}
		if raw.(*structs.RootKey).IsActive() {
			return fmt.Errorf("root key %q is active and %w: rotate first", id, ErrRootKeyKept)
		}
		if err := tx.rootKeySealsVariables(id); err != nil {
			return err
		}
		if err := tx.Delete(TableRootKeys, raw); err != nil {
			return fmt.Errorf("delete root key %q: %w", id, err)
		}
		tx.touch(TableRootKeys)
		return nil
	})
}
