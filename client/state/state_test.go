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
	db, err := Open(path, false)
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

	db, err = Open(path, false)
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

// A durable DB syncs every commit; an ephemeral one (a dev agent's temp
// dir) does not, and still stores what it is given.
func TestOpen_EphemeralSkipsFsync(t *testing.T) {
	durable, err := Open(filepath.Join(t.TempDir(), "state.db"), false)
	must.NoError(t, err)
	defer durable.Close()
	must.False(t, durable.db.NoSync)

	eph, err := Open(filepath.Join(t.TempDir(), "state.db"), true)
	must.NoError(t, err)
	defer eph.Close()
	must.True(t, eph.db.NoSync)
	must.NoError(t, eph.PutNodeIdentity("node-1", "secret-1"))
	id, secret, err := eph.NodeIdentity()
	must.NoError(t, err)
	must.Eq(t, "node-1", id)
	must.Eq(t, "secret-1", secret)
}
