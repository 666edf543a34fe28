package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableNodePools holds the node pools, keyed by name.
const TableNodePools = "node_pools"

func nodePoolTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNodePools,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: &memdb.StringFieldIndex{Field: "Name"},
			},
		},
	}
}

// NodePoolByName returns the node pool, or nil.
func (r *reader) NodePoolByName(ws memdb.WatchSet, name string) (*structs.NodePool, error) {
	return nodePoolByName(r.db.Txn(false), ws, name)
}

func nodePoolByName(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.NodePool, error) {
	watchCh, raw, err := txn.FirstWatch(TableNodePools, "id", name)
	if err != nil {
		return nil, fmt.Errorf("node pool lookup %q: %w", name, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.NodePool), nil
}

// NodePoolsByNamePrefix returns the node pools whose name starts with
// prefix ("": all), ordered by name.
func (r *reader) NodePoolsByNamePrefix(ws memdb.WatchSet, prefix string) ([]*structs.NodePool, error) {
	iter, err := r.db.Txn(false).Get(TableNodePools, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list node pools with prefix %q: %w", prefix, err)
	}
	return collect[*structs.NodePool](ws, iter, nil), nil
}

// JobsByNodePool returns the jobs of every namespace that name the pool,
// ordered by pool, then namespace and ID.
func (r *reader) JobsByNodePool(ws memdb.WatchSet, pool string) ([]*structs.Job, error) {
	if pool == structs.DefaultNodePool {
		// Not in the node_pool index (see jobTableSchema): read every
		// job, in the id index's namespace and ID order.
		iter, err := r.db.Txn(false).Get(TableJobs, "id")
		if err != nil {
			return nil, fmt.Errorf("list jobs of node pool %q: %w", pool, err)
		}
		return collect(ws, iter, func(j *structs.Job) bool { return j.NodePool == pool || j.NodePool == "" }), nil
	}
	iter, err := r.db.Txn(false).Get(TableJobs, "node_pool", pool)
	if err != nil {
		return nil, fmt.Errorf("list jobs of node pool %q: %w", pool, err)
	}
	return collect[*structs.Job](ws, iter, nil), nil
}

// UpsertNodePools creates or replaces node pools. A replaced pool keeps
// its CreateIndex. The built-in pools cannot be written.
func (s *StateStore) UpsertNodePools(index uint64, pools []*structs.NodePool) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, p := range pools {
			if p == nil || p.Name == "" {
				return errors.New("upsert node pool: missing name")
			}
			if structs.IsBuiltinNodePool(p.Name) {
				return structs.NewBadRequestf("modifying node pool %q is not allowed", p.Name)
			}
			if err := tx.putNodePool(p); err != nil {
				return err
			}
		}
		return nil
	})
}

func (tx *writeTxn) putNodePool(p *structs.NodePool) error {
	existing, err := nodePoolByName(tx.Txn, nil, p.Name)
	if err != nil {
		return err
	}
	p.CreateIndex = tx.index
	if existing != nil {
		p.CreateIndex = existing.CreateIndex
	}
	p.ModifyIndex = tx.index
	if err := tx.Insert(TableNodePools, p); err != nil {
		return fmt.Errorf("upsert node pool %q: %w", p.Name, err)
	}
	tx.touch(TableNodePools)
	return nil
}

// ensureNodePool creates the pool a node registers in when it does not
// exist yet, as Nomad does, so that every node's pool can be listed.
func (tx *writeTxn) ensureNodePool(name string) error {
	existing, err := nodePoolByName(tx.Txn, nil, name)
	if err != nil || existing != nil {
		return err
	}
	p := &structs.NodePool{Name: name, Meta: map[string]string{}}
	p.Canonicalize()
	return tx.putNodePool(p)
}

// DeleteNodePools deletes node pools by name. A name that does not
// exist, the built-in pools and a pool that still has nodes or
// non-terminal jobs are refused, and then nothing is deleted.
func (s *StateStore) DeleteNodePools(index uint64, names []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, name := range names {
			if structs.IsBuiltinNodePool(name) {
				return structs.NewBadRequestf("deleting built-in node pool %q is not allowed", name)
			}
			existing, err := nodePoolByName(tx.Txn, nil, name)
			if err != nil {
				return err
			}
			if existing == nil {
				return structs.NewErrNotFoundf("node pool %q not found", name)
			}
			nodes, jobs, err := nodePoolUsage(tx.Txn, name)
			if err != nil {
				return err
			}
			if err := NodePoolInUseError(name, "", nodes, jobs); err != nil {
				return structs.NewBadRequestf("%s", err)
			}
			if err := tx.Delete(TableNodePools, existing); err != nil {
				return fmt.Errorf("delete node pool %q: %w", name, err)
			}
		}
		tx.touch(TableNodePools)
		return nil
	})
}

// NodePoolUsage returns how many nodes the pool has and the IDs of the
// non-terminal jobs that name it, which keep it from being deleted.
func (r *reader) NodePoolUsage(name string) (int, []string, error) {
	return nodePoolUsage(r.db.Txn(false), name)
}

func nodePoolUsage(txn *memdb.Txn, name string) (int, []string, error) {
	niter, err := txn.Get(TableNodes, "node_pool", name)
	if err != nil {
		return 0, nil, fmt.Errorf("list nodes of node pool %q: %w", name, err)
	}
	nodes := 0
	for raw := niter.Next(); raw != nil; raw = niter.Next() {
		nodes++
	}
	jiter, err := txn.Get(TableJobs, "node_pool", name)
	if err != nil {
		return 0, nil, fmt.Errorf("list jobs of node pool %q: %w", name, err)
	}
	var jobs []string
	for raw := jiter.Next(); raw != nil; raw = jiter.Next() {
		if j := raw.(*structs.Job); j.Status != structs.JobStatusDead {
			jobs = append(jobs, j.NamespacedID().String())
		}
	}
	return nodes, jobs, nil
}

// NodePoolInUseError words the refusal to delete a pool that has nodes or
// non-terminal jobs in region ("" leaves it out), or returns nil when it
// has neither. It carries no code: a caller that collects several
// refusals codes them together (structs.NewBadRequestf).
func NodePoolInUseError(name, region string, nodes int, jobs []string) error {
	in := ""
	if region != "" {
		in = fmt.Sprintf(" in regions: [%s]", region)
	}
	var errs structs.MultiError
	if len(jobs) > 0 {
		errs.Add(fmt.Errorf("node pool %q has non-terminal jobs%s (%d jobs: %s)", name, in, len(jobs), listSome(jobs)))
	}
	if nodes > 0 {
		errs.Add(fmt.Errorf("node pool %q has nodes%s (%d nodes)", name, in, nodes))
	}
	return errs.ErrorOrNil()
}
