package state

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableNamespaces holds the namespaces, keyed by name.
const TableNamespaces = "namespaces"

func namespaceTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNamespaces,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: &memdb.StringFieldIndex{Field: "Name"},
			},
		},
	}
}

// NamespaceByName returns the namespace, or nil.
func (r *reader) NamespaceByName(ws memdb.WatchSet, name string) (*structs.Namespace, error) {
	return namespaceByName(r.db.Txn(false), ws, name)
}

func namespaceByName(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.Namespace, error) {
	watchCh, raw, err := txn.FirstWatch(TableNamespaces, "id", name)
	if err != nil {
		return nil, fmt.Errorf("namespace lookup %q: %w", name, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Namespace), nil
}

// NamespacesByNamePrefix returns the namespaces whose name starts with
// prefix ("": all), ordered by name.
func (r *reader) NamespacesByNamePrefix(ws memdb.WatchSet, prefix string) ([]*structs.Namespace, error) {
	iter, err := r.db.Txn(false).Get(TableNamespaces, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list namespaces with prefix %q: %w", prefix, err)
	}
	return collect[*structs.Namespace](ws, iter, nil), nil
}

// UpsertNamespaces creates or replaces namespaces. A replaced namespace
// keeps its CreateIndex.
func (s *StateStore) UpsertNamespaces(index uint64, namespaces []*structs.Namespace) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, ns := range namespaces {
			if ns == nil || ns.Name == "" {
				return errors.New("upsert namespace: missing name")
			}
			existing, err := namespaceByName(tx.Txn, nil, ns.Name)
			if err != nil {
				return err
			}
			ns.CreateIndex = tx.index
			if existing != nil {
				ns.CreateIndex = existing.CreateIndex
			}
			ns.ModifyIndex = tx.index
			if err := tx.Insert(TableNamespaces, ns); err != nil {
				return fmt.Errorf("upsert namespace %q: %w", ns.Name, err)
			}
		}
		tx.touch(TableNamespaces)
		return nil
	})
}

// DeleteNamespaces deletes namespaces by name. A name that does not
// exist, the default namespace and a namespace that still holds
// non-terminal jobs or allocations are refused, and then nothing is
// deleted.
func (s *StateStore) DeleteNamespaces(index uint64, names []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, name := range names {
			if name == structs.DefaultNamespace {
				return structs.NewBadRequestf("can not delete default namespace")
			}
			existing, err := namespaceByName(tx.Txn, nil, name)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("namespace %q not found", name)
			}
			if err := tx.namespaceInUse(name); err != nil {
				return err
			}
			if err := tx.Delete(TableNamespaces, existing); err != nil {
				return fmt.Errorf("delete namespace %q: %w", name, err)
			}
		}
		tx.touch(TableNamespaces)
		return nil
	})
}

// NamespaceUsage returns the IDs of the namespace's non-terminal jobs
// and the number of its non-terminal allocations, which keep it from
// being deleted.
func (r *reader) NamespaceUsage(name string) ([]string, int, error) {
	return namespaceUsage(r.db.Txn(false), name)
}

func (tx *writeTxn) namespaceInUse(name string) error {
	jobs, allocs, err := namespaceUsage(tx.Txn, name)
	if err != nil {
		return err
	}
	if err := NamespaceInUseError(name, "", jobs, allocs); err != nil {
		return structs.NewBadRequestf("%s", err)
	}
	return nil
}

// NamespaceInUseError words the refusal to delete a namespace that holds
// non-terminal jobs or allocations in region ("" leaves it out), or
// returns nil when it holds none. It carries no code: a caller that
// collects several refusals codes them together (structs.NewBadRequestf).
func NamespaceInUseError(name, region string, jobs []string, allocs int) error {
	in := ""
	if region != "" {
		in = fmt.Sprintf(" in regions: [%s]", region)
	}
	switch {
	case len(jobs) > 0:
		return fmt.Errorf("namespace %q has non-terminal jobs%s (%d jobs: %s)", name, in, len(jobs), listSome(jobs))
	case allocs > 0:
		return fmt.Errorf("namespace %q has non-terminal allocations%s (%d allocations)", name, in, allocs)
	}
	return nil
}

func namespaceUsage(txn *memdb.Txn, name string) ([]string, int, error) {
	iter, err := txn.Get(TableJobs, "id_prefix", name, "")
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs of namespace %q: %w", name, err)
	}
	var jobs []string
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		j := raw.(*structs.Job)
		if j.Namespace == name && j.Status != structs.JobStatusDead {
			jobs = append(jobs, j.ID)
		}
	}
	aiter, err := allocsOfNamespace(txn, name)
	if err != nil {
		return nil, 0, fmt.Errorf("list allocations of namespace %q: %w", name, err)
	}
	allocs := 0
	for raw := aiter.Next(); raw != nil; raw = aiter.Next() {
		if !raw.(*structs.Allocation).TerminalStatus() {
			allocs++
		}
	}
	return jobs, allocs, nil
}

// listSome names up to five items, and how many more there are.
func listSome(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:most], ", "), len(items)-most)
}
