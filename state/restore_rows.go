package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// RowRestore builds a new store from rows decoded outside this package (a
// snapshot written by Nomad), the way RestoreFrom builds one from a stream
// of ours: every row in one write transaction on a store that no one else
// sees, committed whole or not at all.
type RowRestore struct {
	store *StateStore
	txn   *memdb.Txn
	share *restoreSharer
	rows  int
}

// NewRowRestore starts a restore into a new store holding only the
// built-in namespace and node pools, which rows of the same name replace.
func NewRowRestore() (*RowRestore, error) {
	store, err := NewStateStore()
	if err != nil {
		return nil, err
	}
	return &RowRestore{store: store, txn: store.db.Txn(true), share: newRestoreSharer()}, nil
}

// Insert adds a row to table, replacing a row with the same ID. The row
// must be of the table's type (*structs.Job for TableJobs, *IndexEntry for
// TableIndex...); it belongs to the store from then on.
func (b *RowRestore) Insert(table string, obj any) error {
	if b.txn == nil {
		return fmt.Errorf("restore rows: insert into %s after commit or abort", table)
	}
	switch row := obj.(type) {
	case *structs.Job:
		switch table {
		case TableJobs:
			b.share.jobRow(row)
		case TableJobVersion:
			b.share.jobVersion(row)
		}
	case *structs.Evaluation:
		b.share.eval(row)
	case *structs.Allocation:
		b.share.alloc(row, 0)
	}
	if err := b.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("restore row %d (%s): %w", b.rows, table, err)
	}
	b.rows++
	return nil
}

// Commit ends the restore and returns the new store. Node alloc changes
// before the restored state count as made at its latest index, as after
// RestoreFrom.
func (b *RowRestore) Commit() (*StateStore, error) {
	if b.txn == nil {
		return nil, fmt.Errorf("restore rows: commit after commit or abort")
	}
	b.txn.Commit()
	b.txn = nil
	latest, err := b.store.LatestIndex()
	if err != nil {
		return nil, err
	}
	b.store.nodeAllocs.floor = latest
	return b.store, nil
}

// Abort drops the restore. It is safe to call after Commit.
func (b *RowRestore) Abort() {
	if b.txn != nil {
		b.txn.Abort()
		b.txn = nil
	}
}
