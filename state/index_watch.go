package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"
)

// LatestIndexWatch is LatestIndex that also adds the index table to ws, so
// a caller waiting for the store to reach an index wakes on every write.
func (r *reader) LatestIndexWatch(ws memdb.WatchSet) (uint64, error) {
	txn := r.db.Txn(false)
	iter, err := txn.Get(TableIndex, "id")
	if err != nil {
		return 0, fmt.Errorf("read latest index: %w", err)
	}
	ws.Add(iter.WatchCh())
	var max uint64
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if v := raw.(*IndexEntry).Value; v > max {
			max = v
		}
	}
	return max, nil
}

// WatchFired reports, without blocking, whether any channel of ws is
// closed: whether what it watches changed since it was read.
func WatchFired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}

// TableIndexWatch returns the Raft index of the last write to table and
// adds it to ws, so a caller wakes on the table's next write.
func (r *reader) TableIndexWatch(ws memdb.WatchSet, table string) (uint64, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableIndex, "id", table)
	if err != nil {
		return 0, fmt.Errorf("read index of %q: %w", table, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return 0, nil
	}
	return raw.(*IndexEntry).Value, nil
}
