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
