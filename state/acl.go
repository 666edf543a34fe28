package state

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// ACL tables.
const (
	TableACLPolicies   = "acl_policy"
	TableACLTokens     = "acl_token"
	TableACLRoles      = "acl_roles"
	TableOneTimeTokens = "one_time_token"
	indexACLBootstrap  = "acl_token_bootstrap"
)

// ErrACLBootstrapDone is wrapped, with the index of the bootstrap, by
// BootstrapACLTokens's error for any bootstrap after the first that the
// reset index does not allow.
var ErrACLBootstrapDone = errors.New("ACL bootstrap already done")

func aclTableSchemas() []*memdb.TableSchema {
	return []*memdb.TableSchema{
		{
			Name: TableACLPolicies,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		},
		{
			Name: TableACLTokens,
			Indexes: map[string]*memdb.IndexSchema{
				"id":     {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "AccessorID"}},
				"secret": {Name: "secret", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "SecretID"}},
			},
		},
		{
			Name: TableACLRoles,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
				"name": {Name: "name", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		},
		{
			Name: TableOneTimeTokens,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "OneTimeSecretID"}},
			},
		},
	}
}

func first[T any](txn *memdb.Txn, ws memdb.WatchSet, table, index string, args ...any) (T, error) {
	var zero T
	watchCh, raw, err := txn.FirstWatch(table, index, args...)
	if err != nil {
		return zero, fmt.Errorf("%s lookup: %w", table, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return zero, nil
	}
	return raw.(T), nil
}

// ACLPolicyByName returns the policy, or nil.
func (r *reader) ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return first[*structs.ACLPolicy](r.db.Txn(false), ws, TableACLPolicies, "id", name)
}

// ACLPolicies returns the policies whose name starts with prefix, by name.
func (r *reader) ACLPolicies(ws memdb.WatchSet, prefix string) ([]*structs.ACLPolicy, error) {
	iter, err := r.db.Txn(false).Get(TableACLPolicies, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list ACL policies: %w", err)
	}
	return collect[*structs.ACLPolicy](ws, iter, nil), nil
}

// UpsertACLPolicies creates or replaces policies.
func (s *StateStore) UpsertACLPolicies(index uint64, policies []*structs.ACLPolicy) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, p := range policies {
			existing, err := first[*structs.ACLPolicy](tx.Txn, nil, TableACLPolicies, "id", p.Name)
			if err != nil {
				return err
			}
			p.CreateIndex, p.ModifyIndex = index, index
			if existing != nil {
				p.CreateIndex = existing.CreateIndex
			}
			if p.Hash == nil {
				p.SetHash()
			}
			if err := tx.Insert(TableACLPolicies, p); err != nil {
				return fmt.Errorf("upsert ACL policy %q: %w", p.Name, err)
			}
		}
		tx.touch(TableACLPolicies)
		return nil
	})
}

// DeleteACLPolicies deletes policies by name; a missing one is an error
// and then nothing is deleted.
func (s *StateStore) DeleteACLPolicies(index uint64, names []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, name := range names {
			existing, err := first[*structs.ACLPolicy](tx.Txn, nil, TableACLPolicies, "id", name)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("ACL policy %q not found", name)
			}
			if err := tx.Delete(TableACLPolicies, existing); err != nil {
				return fmt.Errorf("delete ACL policy %q: %w", name, err)
			}
		}
		tx.touch(TableACLPolicies)
		return nil
	})
}

// ACLTokenByAccessorID returns the token, or nil.
func (r *reader) ACLTokenByAccessorID(ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	return first[*structs.ACLToken](r.db.Txn(false), ws, TableACLTokens, "id", id)
}

// ACLTokenBySecretID returns the token, or nil.
func (r *reader) ACLTokenBySecretID(ws memdb.WatchSet, secret string) (*structs.ACLToken, error) {
	return first[*structs.ACLToken](r.db.Txn(false), ws, TableACLTokens, "secret", secret)
}

// ACLTokens returns every token (globalOnly: only global ones), ordered by
// accessor ID.
func (r *reader) ACLTokens(ws memdb.WatchSet, prefix string, globalOnly bool) ([]*structs.ACLToken, error) {
	txn := r.db.Txn(false)
	var iter memdb.ResultIterator
	var err error
	if prefix != "" {
		iter, err = txn.Get(TableACLTokens, "id_prefix", prefix)
	} else {
		iter, err = txn.Get(TableACLTokens, "id")
	}
	if err != nil {
		return nil, fmt.Errorf("list ACL tokens: %w", err)
	}
	return collect(ws, iter, func(t *structs.ACLToken) bool { return !globalOnly || t.Global }), nil
}

// UpsertACLTokens creates or replaces tokens. A token keeps its
// CreateIndex, and a secret can belong to one token only.
func (s *StateStore) UpsertACLTokens(index uint64, tokens []*structs.ACLToken) error {
	return s.write(index, func(tx *writeTxn) error {
		return tx.upsertACLTokens(index, tokens)
	})
}

func (tx *writeTxn) upsertACLTokens(index uint64, tokens []*structs.ACLToken) error {
	for _, t := range tokens {
		if t.AccessorID == "" || t.SecretID == "" {
			return errors.New("upsert ACL token: missing accessor or secret ID")
		}
		existing, err := first[*structs.ACLToken](tx.Txn, nil, TableACLTokens, "id", t.AccessorID)
		if err != nil {
			return err
		}
		other, err := first[*structs.ACLToken](tx.Txn, nil, TableACLTokens, "secret", t.SecretID)
		if err != nil {
			return err
		}
		if other != nil && other.AccessorID != t.AccessorID {
			return fmt.Errorf("upsert ACL token %s: secret ID already in use", t.AccessorID)
		}
		t.CreateIndex, t.ModifyIndex = index, index
		if existing != nil {
			t.CreateIndex = existing.CreateIndex
		}
		if t.Hash == nil {
			t.SetHash()
		}
		if err := tx.Insert(TableACLTokens, t); err != nil {
			return fmt.Errorf("upsert ACL token %s: %w", t.AccessorID, err)
		}
	}
	tx.touch(TableACLTokens)
	return nil
}

// DeleteACLTokens deletes tokens by accessor ID; a missing one is an error
// and then nothing is deleted.
func (s *StateStore) DeleteACLTokens(index uint64, ids []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, id := range ids {
			existing, err := first[*structs.ACLToken](tx.Txn, nil, TableACLTokens, "id", id)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("ACL token %s not found", id)
			}
			if err := tx.Delete(TableACLTokens, existing); err != nil {
				return fmt.Errorf("delete ACL token %s: %w", id, err)
			}
			if err := tx.deleteOneTimeTokensOf(id); err != nil {
				return err
			}
		}
		tx.touch(TableACLTokens, TableOneTimeTokens)
		return nil
	})
}

// ACLBootstrapIndex returns the Raft index of the bootstrap (0: never).
func (r *reader) ACLBootstrapIndex() (uint64, error) {
	e, err := first[*IndexEntry](r.db.Txn(false), nil, TableIndex, "id", indexACLBootstrap)
	if err != nil || e == nil {
		return 0, err
	}
	return e.Value, nil
}

// BootstrapACLTokens writes the first management token. It fails when a
// bootstrap happened already, unless resetIndex is that bootstrap's index
// (the operator's reset file).
func (s *StateStore) BootstrapACLTokens(index, resetIndex uint64, token *structs.ACLToken) error {
	return s.write(index, func(tx *writeTxn) error {
		done, err := first[*IndexEntry](tx.Txn, nil, TableIndex, "id", indexACLBootstrap)
		if err != nil {
			return err
		}
		if done != nil && done.Value != resetIndex {
			return fmt.Errorf("%w (reset index: %d)", ErrACLBootstrapDone, done.Value)
		}
		if err := tx.upsertACLTokens(index, []*structs.ACLToken{token}); err != nil {
			return err
		}
		return tx.Insert(TableIndex, &IndexEntry{Key: indexACLBootstrap, Value: index})
	})
}

// ACLRoleByID returns the role, or nil.
func (r *reader) ACLRoleByID(ws memdb.WatchSet, id string) (*structs.ACLRole, error) {
	return first[*structs.ACLRole](r.db.Txn(false), ws, TableACLRoles, "id", id)
}

// ACLRoleByName returns the role, or nil.
func (r *reader) ACLRoleByName(ws memdb.WatchSet, name string) (*structs.ACLRole, error) {
	return first[*structs.ACLRole](r.db.Txn(false), ws, TableACLRoles, "name", name)
}

// ACLRoles returns every role whose ID starts with prefix, by ID.
func (r *reader) ACLRoles(ws memdb.WatchSet, prefix string) ([]*structs.ACLRole, error) {
	iter, err := r.db.Txn(false).Get(TableACLRoles, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list ACL roles: %w", err)
	}
	return collect[*structs.ACLRole](ws, iter, nil), nil
}

// UpsertACLRoles creates or replaces roles. Every policy a role links to
// must exist, and a name belongs to one role only.
func (s *StateStore) UpsertACLRoles(index uint64, roles []*structs.ACLRole) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, role := range roles {
			for _, p := range role.Policies {
				existing, err := first[*structs.ACLPolicy](tx.Txn, nil, TableACLPolicies, "id", p.Name)
				if err != nil {
					return err
				}
				if existing == nil {
					return fmt.Errorf("cannot find policy %s", p.Name)
				}
			}
			byName, err := first[*structs.ACLRole](tx.Txn, nil, TableACLRoles, "name", role.Name)
			if err != nil {
				return err
			}
			if byName != nil && byName.ID != role.ID {
				return fmt.Errorf("ACL role with name %s already exists", role.Name)
			}
			existing, err := first[*structs.ACLRole](tx.Txn, nil, TableACLRoles, "id", role.ID)
			if err != nil {
				return err
			}
			role.CreateIndex, role.ModifyIndex = index, index
			if existing != nil {
				role.CreateIndex = existing.CreateIndex
			}
			if role.Hash == nil {
				role.SetHash()
			}
			if err := tx.Insert(TableACLRoles, role); err != nil {
				return fmt.Errorf("upsert ACL role %q: %w", role.Name, err)
			}
		}
		tx.touch(TableACLRoles)
		return nil
	})
}

// DeleteACLRolesByID deletes roles; a missing one is an error and then
// nothing is deleted. Tokens that linked to a deleted role keep the link,
// which then grants nothing.
func (s *StateStore) DeleteACLRolesByID(index uint64, ids []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, id := range ids {
			existing, err := first[*structs.ACLRole](tx.Txn, nil, TableACLRoles, "id", id)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("ACL role not found")
			}
			if err := tx.Delete(TableACLRoles, existing); err != nil {
				return fmt.Errorf("delete ACL role %s: %w", id, err)
			}
		}
		tx.touch(TableACLRoles)
		return nil
	})
}

// OneTimeTokenBySecret returns the one-time token, or nil.
func (r *reader) OneTimeTokenBySecret(ws memdb.WatchSet, secret string) (*structs.OneTimeToken, error) {
	return first[*structs.OneTimeToken](r.db.Txn(false), ws, TableOneTimeTokens, "id", secret)
}

// UpsertOneTimeToken stores a one-time token.
func (s *StateStore) UpsertOneTimeToken(index uint64, ott *structs.OneTimeToken) error {
	return s.write(index, func(tx *writeTxn) error {
		ott.CreateIndex, ott.ModifyIndex = index, index
		if err := tx.Insert(TableOneTimeTokens, ott); err != nil {
			return fmt.Errorf("upsert one-time token: %w", err)
		}
		tx.touch(TableOneTimeTokens)
		return nil
	})
}

// DeleteOneTimeTokens deletes one-time tokens by secret, and every one
// that expired before expireBefore (when set). Missing secrets are not an
// error: an exchange may race with the expiry.
func (s *StateStore) DeleteOneTimeTokens(index uint64, secrets []string, expireBefore time.Time) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, secret := range secrets {
			if _, err := tx.DeleteAll(TableOneTimeTokens, "id", secret); err != nil {
				return fmt.Errorf("delete one-time token: %w", err)
			}
		}
		if !expireBefore.IsZero() {
			iter, err := tx.Get(TableOneTimeTokens, "id")
			if err != nil {
				return err
			}
			var expired []*structs.OneTimeToken
			for raw := iter.Next(); raw != nil; raw = iter.Next() {
				if ott := raw.(*structs.OneTimeToken); ott.ExpiresAt.Before(expireBefore) {
					expired = append(expired, ott)
				}
			}
			for _, ott := range expired {
				if err := tx.Delete(TableOneTimeTokens, ott); err != nil {
					return err
				}
			}
		}
		tx.touch(TableOneTimeTokens)
		return nil
	})
}

// deleteOneTimeTokensOf deletes the one-time tokens that stand for the
// token accessor: a deleted token must not come back through one.
func (tx *writeTxn) deleteOneTimeTokensOf(accessor string) error {
	iter, err := tx.Get(TableOneTimeTokens, "id")
	if err != nil {
		return err
	}
	var gone []any
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if raw.(*structs.OneTimeToken).AccessorID == accessor {
			gone = append(gone, raw)
		}
	}
	for _, raw := range gone {
		if err := tx.Delete(TableOneTimeTokens, raw); err != nil {
			return fmt.Errorf("delete one-time token: %w", err)
		}
	}
	return nil
}
