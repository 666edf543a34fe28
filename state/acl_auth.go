package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// Tables of auth methods and binding rules.
const (
	TableACLAuthMethods  = "acl_auth_methods"
	TableACLBindingRules = "acl_binding_rules"
)

// Snapshot records of auth methods and binding rules; fixed numbers next
// to the other ACL records.
const (
	aclAuthMethodRecord  recordType = 74
	aclBindingRuleRecord recordType = 75
)

func init() {
	type row = struct {
		table  string
		record recordType
		newRow func() any
	}
	snapshotTables = append(snapshotTables,
		row{TableACLAuthMethods, aclAuthMethodRecord, func() any { return new(structs.ACLAuthMethod) }},
		row{TableACLBindingRules, aclBindingRuleRecord, func() any { return new(structs.ACLBindingRule) }})
}

func aclAuthTableSchemas() []*memdb.TableSchema {
	return []*memdb.TableSchema{
		{
			Name: TableACLAuthMethods,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		},
		{
			Name: TableACLBindingRules,
			Indexes: map[string]*memdb.IndexSchema{
				"id":          {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
				"auth_method": {Name: "auth_method", Indexer: &memdb.StringFieldIndex{Field: "AuthMethod"}},
			},
		},
	}
}

// ACLAuthMethodByName returns the auth method, or nil.
func (r *reader) ACLAuthMethodByName(ws memdb.WatchSet, name string) (*structs.ACLAuthMethod, error) {
	return first[*structs.ACLAuthMethod](r.db.Txn(false), ws, TableACLAuthMethods, "id", name)
}

// ACLAuthMethods returns every auth method, by name.
func (r *reader) ACLAuthMethods(ws memdb.WatchSet) ([]*structs.ACLAuthMethod, error) {
	iter, err := r.db.Txn(false).Get(TableACLAuthMethods, "id")
	if err != nil {
		return nil, fmt.Errorf("list ACL auth methods: %w", err)
	}
	return collect[*structs.ACLAuthMethod](ws, iter, nil), nil
}

// DefaultACLAuthMethod returns the method marked Default, or nil.
func (r *reader) DefaultACLAuthMethod(ws memdb.WatchSet) (*structs.ACLAuthMethod, error) {
	methods, err := r.ACLAuthMethods(ws)
	if err != nil {
		return nil, err
	}
	for _, m := range methods {
		if m.Default {
			return m, nil
		}
	}
	return nil, nil
}

// UpsertACLAuthMethods creates or replaces auth methods. At most one
// method may be the default, and a method keeps its creation index and
// time.
func (s *StateStore) UpsertACLAuthMethods(index uint64, methods []*structs.ACLAuthMethod) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, m := range methods {
			existing, err := first[*structs.ACLAuthMethod](tx.Txn, nil, TableACLAuthMethods, "id", m.Name)
			if err != nil {
				return err
			}
			if m.Default {
				iter, err := tx.Get(TableACLAuthMethods, "id")
				if err != nil {
					return err
				}
				for raw := iter.Next(); raw != nil; raw = iter.Next() {
					if other := raw.(*structs.ACLAuthMethod); other.Default && other.Name != m.Name {
						return fmt.Errorf("default ACL auth method already exists: %s", other.Name)
					}
				}
			}
			m.CreateIndex, m.ModifyIndex = index, index
			if existing != nil {
				m.CreateIndex, m.CreateTime = existing.CreateIndex, existing.CreateTime
			}
			if m.Hash == nil {
				m.SetHash()
			}
			if err := tx.Insert(TableACLAuthMethods, m); err != nil {
				return fmt.Errorf("upsert ACL auth method %q: %w", m.Name, err)
			}
		}
		tx.touch(TableACLAuthMethods)
		return nil
	})
}

// DeleteACLAuthMethods deletes auth methods by name, with their binding
// rules (which could never match again); a missing method is an error and
// then nothing is deleted.
func (s *StateStore) DeleteACLAuthMethods(index uint64, names []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, name := range names {
			existing, err := first[*structs.ACLAuthMethod](tx.Txn, nil, TableACLAuthMethods, "id", name)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("ACL auth method %q not found", name)
			}
			if err := tx.Delete(TableACLAuthMethods, existing); err != nil {
				return fmt.Errorf("delete ACL auth method %q: %w", name, err)
			}
			if _, err := tx.DeleteAll(TableACLBindingRules, "auth_method", name); err != nil {
				return fmt.Errorf("delete binding rules of ACL auth method %q: %w", name, err)
			}
		}
		tx.touch(TableACLAuthMethods, TableACLBindingRules)
		return nil
	})
}

// ACLBindingRuleByID returns the binding rule, or nil.
func (r *reader) ACLBindingRuleByID(ws memdb.WatchSet, id string) (*structs.ACLBindingRule, error) {
	return first[*structs.ACLBindingRule](r.db.Txn(false), ws, TableACLBindingRules, "id", id)
}

// ACLBindingRules returns every binding rule whose ID starts with prefix,
// by ID.
func (r *reader) ACLBindingRules(ws memdb.WatchSet, prefix string) ([]*structs.ACLBindingRule, error) {
	iter, err := r.db.Txn(false).Get(TableACLBindingRules, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list ACL binding rules: %w", err)
	}
	return collect[*structs.ACLBindingRule](ws, iter, nil), nil
}

// ACLBindingRulesByAuthMethod returns the rules of one auth method, by ID.
func (r *reader) ACLBindingRulesByAuthMethod(ws memdb.WatchSet, method string) ([]*structs.ACLBindingRule, error) {
	iter, err := r.db.Txn(false).Get(TableACLBindingRules, "auth_method", method)
	if err != nil {
		return nil, fmt.Errorf("list ACL binding rules of %q: %w", method, err)
	}
	return collect[*structs.ACLBindingRule](ws, iter, nil), nil
}

// UpsertACLBindingRules creates or replaces binding rules; each rule's
// auth method must exist.
func (s *StateStore) UpsertACLBindingRules(index uint64, rules []*structs.ACLBindingRule) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, rule := range rules {
			if rule.ID == "" {
				return fmt.Errorf("upsert ACL binding rule: missing ID")
			}
			method, err := first[*structs.ACLAuthMethod](tx.Txn, nil, TableACLAuthMethods, "id", rule.AuthMethod)
			if err != nil {
				return err
			}
			if method == nil {
				return structs.NewErrNotFoundf("ACL binding rule insert failed: ACL auth method %q not found", rule.AuthMethod)
			}
			existing, err := first[*structs.ACLBindingRule](tx.Txn, nil, TableACLBindingRules, "id", rule.ID)
			if err != nil {
				return err
			}
			rule.CreateIndex, rule.ModifyIndex = index, index
			if existing != nil {
				rule.CreateIndex, rule.CreateTime = existing.CreateIndex, existing.CreateTime
			}
			if rule.Hash == nil {
				rule.SetHash()
			}
			if err := tx.Insert(TableACLBindingRules, rule); err != nil {
				return fmt.Errorf("upsert ACL binding rule %s: %w", rule.ID, err)
			}
		}
		tx.touch(TableACLBindingRules)
		return nil
	})
}

// DeleteACLBindingRules deletes binding rules by ID; a missing one is an
// error and then nothing is deleted.
func (s *StateStore) DeleteACLBindingRules(index uint64, ids []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, id := range ids {
			existing, err := first[*structs.ACLBindingRule](tx.Txn, nil, TableACLBindingRules, "id", id)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("ACL binding rule %s not found", id)
			}
			if err := tx.Delete(TableACLBindingRules, existing); err != nil {
				return fmt.Errorf("delete ACL binding rule %s: %w", id, err)
			}
		}
		tx.touch(TableACLBindingRules)
		return nil
	})
}
