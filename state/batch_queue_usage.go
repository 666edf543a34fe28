package state

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableBatchQueueUsageResets holds operators' resets of namespaces'
// decayed batch usage, one row per namespace reset.
const TableBatchQueueUsageResets = "batch_queue_usage_resets"

const batchQueueUsageResetRecord recordType = 203

func init() {
	type table = struct {
		table  string
		record recordType
		newRow func() any
	}
	snapshotTables = append(snapshotTables,
		table{TableBatchQueueUsageResets, batchQueueUsageResetRecord, func() any { return new(structs.BatchQueueUsageReset) }})
}

func batchQueueUsageResetsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableBatchQueueUsageResets,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Namespace"}},
		},
	}
}

// BatchQueueUsageResets returns each reset namespace's reset time.
func (r *reader) BatchQueueUsageResets(ws memdb.WatchSet) (map[string]time.Time, error) {
	txn := r.db.Txn(false)
	iter, err := txn.Get(TableBatchQueueUsageResets, "id")
	if err != nil {
		return nil, fmt.Errorf("list batch queue usage resets: %w", err)
	}
	ws.Add(iter.WatchCh())
	out := map[string]time.Time{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if row := raw.(*structs.BatchQueueUsageReset); row.Time != 0 {
			out[row.Namespace] = time.Unix(0, row.Time)
		}
	}
	return out, nil
}

// BatchQueueUsageFolded returns each namespace's folded usage of its
// garbage-collected batch allocs, for those that have any.
func (r *reader) BatchQueueUsageFolded(ws memdb.WatchSet) (map[string]structs.BatchQueueFoldedUsage, error) {
	txn := r.db.Txn(false)
	iter, err := txn.Get(TableBatchQueueUsageResets, "id")
	if err != nil {
		return nil, fmt.Errorf("list batch queue folded usage: %w", err)
	}
	ws.Add(iter.WatchCh())
	out := map[string]structs.BatchQueueFoldedUsage{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if row := raw.(*structs.BatchQueueUsageReset); row.Folded.Usage > 0 {
			out[row.Namespace] = row.Folded
		}
	}
	return out, nil
}

// BatchQueueUsageReset records a reset of the request's namespace's
// decayed usage at the request's time; the row it writes holds no folded
// usage, so the reset forgets that of garbage-collected allocs too.
func (s *StateStore) BatchQueueUsageReset(index uint64, req *structs.BatchQueueUsageResetRequest) error {
	return s.write(index, func(tx *writeTxn) error {
		row := &structs.BatchQueueUsageReset{Namespace: req.Namespace, Time: req.Time, ModifyIndex: index}
		if err := tx.Insert(TableBatchQueueUsageResets, row); err != nil {
			return fmt.Errorf("write batch queue usage reset: %w", err)
		}
		tx.touch(TableBatchQueueUsageResets)
		return nil
	})
}

// foldBatchQueueUsage adds the runs of the batch allocs about to be
// deleted to their namespaces' folded usage, so a garbage collection does
// not lower a namespace's decayed usage. It reads only Raft state and
// the allocs' own times (see BatchQueueFoldedUsage.Add), never a clock,
// so every server folds the same: the share of each alloc is its
// dominant share of the ready nodes, as the queue reads the cluster, the
// half-life the configured one (the default when none is set), and the
// part of a run before the namespace's last reset does not count.
func (tx *writeTxn) foldBatchQueueUsage(allocs []*structs.Allocation) error {
	var runs []*structs.Allocation
	for _, a := range allocs {
		if a.Job != nil && a.Job.Type == structs.JobTypeBatch {
			runs = append(runs, a)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	cfg, err := schedulerConfig(tx.Txn, nil)
	if err != nil {
		return err
	}
	halfLife := structs.DefaultBatchQueueUsageHalfLife
	if cfg != nil && cfg.BatchQueue.Multifactor.UsageHalfLife > 0 {
		halfLife = cfg.BatchQueue.Multifactor.UsageHalfLife
	}
	var total structs.ComparableResources
	nodes, err := tx.Get(TableNodes, "id")
	if err != nil {
		return fmt.Errorf("fold batch queue usage: list nodes: %w", err)
	}
	for raw := nodes.Next(); raw != nil; raw = nodes.Next() {
		if n := raw.(*structs.Node); n.Ready() {
			total.Add(n.Comparable())
		}
	}
	rows := map[string]*structs.BatchQueueUsageReset{}
	for _, a := range runs {
		start, end, ok := a.BatchRun()
		if !ok {
			continue // no task of it started
		}
		if end.IsZero() {
			// Stopped by the server while its client never reported an
			// end (its node went away): its run ends at the last change.
			end = time.Unix(0, a.ModifyTime)
		}
		row := rows[a.Namespace]
		if row == nil {
			raw, err := tx.First(TableBatchQueueUsageResets, "id", a.Namespace)
			if err != nil {
				return fmt.Errorf("fold batch queue usage of %q: %w", a.Namespace, err)
			}
			row = &structs.BatchQueueUsageReset{Namespace: a.Namespace}
			if raw != nil {
				*row = *raw.(*structs.BatchQueueUsageReset)
			}
			rows[a.Namespace] = row
		}
		if since := time.Unix(0, row.Time); row.Time != 0 && start.Before(since) {
			start = since
		}
		row.Folded = row.Folded.Add(structs.DominantShare(a.Usage(), total), start, end, halfLife)
	}
	for _, row := range rows {
		row.ModifyIndex = tx.index
		if err := tx.Insert(TableBatchQueueUsageResets, row); err != nil {
			return fmt.Errorf("fold batch queue usage of %q: %w", row.Namespace, err)
		}
		tx.touch(TableBatchQueueUsageResets)
	}
	return nil
}
