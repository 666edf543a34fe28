package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableBatchQueueControls holds operators' holds and tops of queued
// entries, one row per controlled job.
const TableBatchQueueControls = "batch_queue_controls"

const batchQueueControlRecord recordType = 202

func init() {
	type table = struct {
		table  string
		record recordType
		newRow func() any
	}
	snapshotTables = append(snapshotTables,
		table{TableBatchQueueControls, batchQueueControlRecord, func() any { return new(structs.BatchQueueControl) }})
}

func batchQueueControlsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableBatchQueueControls,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "JobID"},
				}},
			},
		},
	}
}

// BatchQueueControls returns the control rows that apply: those whose
// entry is still queued with the same EnqueueIndex, keyed by namespace
// and job ID joined by a NUL byte.
func (r *reader) BatchQueueControls(ws memdb.WatchSet) (map[string]*structs.BatchQueueControl, error) {
	txn := r.db.Txn(false)
	iter, err := txn.Get(TableBatchQueueControls, "id")
	if err != nil {
		return nil, fmt.Errorf("list batch queue controls: %w", err)
	}
	ws.Add(iter.WatchCh())
	out := map[string]*structs.BatchQueueControl{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		c := raw.(*structs.BatchQueueControl)
		e, err := batchQueueEntry(txn, nil, c.Namespace, c.JobID)
		if err != nil {
			return nil, err
		}
		if e == nil || e.Released() || e.EnqueueIndex != c.EnqueueIndex || (!c.Held && c.Top == 0) {
			continue
		}
		out[c.Namespace+"\x00"+c.JobID] = c
	}
	return out, nil
}

// BatchQueueControl applies an operator's hold, release or top to a
// queued job. The job must wait in the queue (not released): holding or
// topping a job that is placing or gone is an error naming it.
func (s *StateStore) BatchQueueControl(index uint64, req *structs.BatchQueueControlRequest) error {
	return s.write(index, func(tx *writeTxn) error {
		e, err := batchQueueEntry(tx.Txn, nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if e == nil || e.Released() {
			return fmt.Errorf("job %q in namespace %q is not waiting in the batch queue", req.JobID, req.Namespace)
		}
		c := &structs.BatchQueueControl{Namespace: e.Namespace, JobID: e.JobID, EnqueueIndex: e.EnqueueIndex}
		raw, err := tx.First(TableBatchQueueControls, "id", e.Namespace, e.JobID)
		if err != nil {
			return fmt.Errorf("read batch queue control: %w", err)
		}
		if old, ok := raw.(*structs.BatchQueueControl); ok && old.EnqueueIndex == e.EnqueueIndex {
			c.Held, c.Top = old.Held, old.Top
		}
		switch req.Op {
		case structs.BatchQueueHold:
			c.Held = true
		case structs.BatchQueueUnhold:
			c.Held = false
		case structs.BatchQueueTop:
			c.Top = index
		default:
			return structs.NewBadRequestf("batch queue control %q is not allowed: must be %q, %q or %q",
				req.Op, structs.BatchQueueHold, structs.BatchQueueUnhold, structs.BatchQueueTop)
		}
		if !c.Held && c.Top == 0 {
			if raw != nil {
				if err := tx.Delete(TableBatchQueueControls, raw); err != nil {
					return fmt.Errorf("remove batch queue control: %w", err)
				}
			}
		} else if err := tx.Insert(TableBatchQueueControls, c); err != nil {
			return fmt.Errorf("write batch queue control: %w", err)
		}
		tx.touch(TableBatchQueueControls)
		return nil
	})
}

// dropBatchQueueControl removes a job's control row, if any, once its
// entry is released or leaves the queue.
func (tx *writeTxn) dropBatchQueueControl(namespace, jobID string) error {
	raw, err := tx.First(TableBatchQueueControls, "id", namespace, jobID)
	if err != nil || raw == nil {
		return err
	}
	if err := tx.Delete(TableBatchQueueControls, raw); err != nil {
		return fmt.Errorf("remove batch queue control: %w", err)
	}
	tx.touch(TableBatchQueueControls)
	return nil
}
