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

// An ephemeral DB (a dev agent's) lives in memory and writes no file; a
// durable one is a bbolt file.
func TestOpen_EphemeralIsInMemory(t *testing.T) {
	dir := t.TempDir()
	durable, err := Open(filepath.Join(dir, "durable.db"), false)
	must.NoError(t, err)
	defer durable.Close()
	_, isBolt := durable.store.(*boltStore)
	must.True(t, isBolt)
	must.FileExists(t, filepath.Join(dir, "durable.db"))

	eph, err := Open(filepath.Join(dir, "eph.db"), true)
	must.NoError(t, err)
	defer eph.Close()
	_, isMem := eph.store.(*memStore)
	must.True(t, isMem)
	must.FileNotExists(t, filepath.Join(dir, "eph.db"))
}

// Both stores keep the same records through the same writes: allocs and
// their runner state, task states and local states updated in part, a
// task write for a deleted alloc dropped, and the node identity.
func TestDB_StoresAgree(t *testing.T) {
	for _, ephemeral := range []bool{false, true} {
		t.Run(map[bool]string{false: "bolt", true: "memory"}[ephemeral], func(t *testing.T) {
			db, err := Open(filepath.Join(t.TempDir(), "state.db"), ephemeral)
			must.NoError(t, err)
			defer db.Close()

			id, secret, err := db.NodeIdentity()
			must.NoError(t, err)
			must.Eq(t, "", id)
			must.Eq(t, "", secret)
			must.NoError(t, db.PutNodeIdentity("node-1", "secret-1"))
			id, secret, err = db.NodeIdentity()
			must.NoError(t, err)
			must.Eq(t, "node-1", id)
			must.Eq(t, "secret-1", secret)

			a := &structs.Allocation{ID: "00000000-0000-0000-0000-00000000000a", JobID: "a", TaskGroup: "g"}
			b := &structs.Allocation{ID: "00000000-0000-0000-0000-00000000000b", JobID: "b", TaskGroup: "g"}
			gone := &structs.Allocation{ID: "00000000-0000-0000-0000-00000000000c", JobID: "c", TaskGroup: "g"}
			must.NoError(t, db.PutAllocs([]*structs.Allocation{b, gone}))
			must.NoError(t, db.PutAlloc(a))
			must.NoError(t, db.PutAllocRunnerState(a.ID, &AllocRunnerState{Kill: &KillRecord{Reason: "max_run_duration", ClientStatus: "failed"}}))
			must.NoError(t, db.PutTask(a.ID, "web", &structs.TaskState{State: "running"}, &LocalTaskState{Runs: 1}))
			// A later state alone keeps the local state.
			must.NoError(t, db.PutTask(a.ID, "web", &structs.TaskState{State: "dead"}, nil))
			must.NoError(t, db.PutTask(b.ID, "side", nil, &LocalTaskState{Runs: 2}))
			must.NoError(t, db.DeleteAlloc(gone.ID))
			must.NoError(t, db.PutTask(gone.ID, "late", &structs.TaskState{State: "dead"}, nil))
			must.NoError(t, db.DeleteAlloc("never-stored"))

			recs, err := db.Allocs()
			must.NoError(t, err)
			must.Len(t, 2, recs)
			must.Eq(t, a.ID, recs[0].Alloc.ID)
			must.Eq(t, "max_run_duration", recs[0].Runner.Kill.Reason)
			must.Eq(t, "dead", recs[0].TaskStates["web"].State)
			must.Eq(t, 1, recs[0].TaskLocal["web"].Runs)
			must.Eq(t, b.ID, recs[1].Alloc.ID)
			must.Nil(t, recs[1].Runner)
			must.MapLen(t, 0, recs[1].TaskStates)
			must.Eq(t, 2, recs[1].TaskLocal["side"].Runs)

			// What a reader gets back is its own copy.
			recs[0].TaskStates["web"].State = "changed"
			again, err := db.Allocs()
			must.NoError(t, err)
			must.Eq(t, "dead", again[0].TaskStates["web"].State)
		})
	}
}
