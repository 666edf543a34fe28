package state

import (
	"path/filepath"
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// TestDB_PutAllocsStoresTheWholeBurst: a burst of new allocs is stored in
// one write, and a restarted client reads every one of them back.
func TestDB_PutAllocsStoresTheWholeBurst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path)
	must.NoError(t, err)
	want := map[string]string{}
	var allocs []*structs.Allocation
	for i := range 200 {
		a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: "default", JobID: "burst", TaskGroup: "work", AllocModifyIndex: uint64(i + 1)}
		allocs = append(allocs, a)
		want[a.ID] = a.JobID
	}
	must.NoError(t, db.PutAllocs(allocs))
	must.NoError(t, db.Close())

	db, err = Open(path)
	must.NoError(t, err)
	defer db.Close()
	recs, err := db.Allocs()
	must.NoError(t, err)
	got := map[string]string{}
	for _, r := range recs {
		got[r.Alloc.ID] = r.Alloc.JobID
	}
	must.Eq(t, want, got)
}
