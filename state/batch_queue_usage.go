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
		row := raw.(*structs.BatchQueueUsageReset)
		out[row.Namespace] = time.Unix(0, row.Time)
	}
	return out, nil
}

// BatchQueueUsageReset records a reset of the request's namespace's
// decayed usage at the request's time.
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
