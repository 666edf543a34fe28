package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestRowRestore_BuildsStoreInOneCommit(t *testing.T) {
	b, err := NewRowRestore()
	must.NoError(t, err)
	job := mockBatchJob("rows")
	must.NoError(t, b.Insert(TableJobs, job))
	must.NoError(t, b.Insert(TableNamespaces, &structs.Namespace{Name: structs.DefaultNamespace, Description: "from the snapshot"}))
	must.NoError(t, b.Insert(TableIndex, &IndexEntry{Key: TableJobs, Value: 40}))
	must.NoError(t, b.Insert(TableIndex, &IndexEntry{Key: "csi_volumes", Value: 57}))

	st, err := b.Commit()
	must.NoError(t, err)
	got, err := st.JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Eq(t, job.ID, got.ID)
	ns, err := st.NamespaceByName(nil, structs.DefaultNamespace)
	must.NoError(t, err)
	must.Eq(t, "from the snapshot", ns.Description) // replaces the built-in
	latest, err := st.LatestIndex()
	must.NoError(t, err)
	must.Eq(t, uint64(57), latest)
	must.Eq(t, uint64(57), st.nodeAllocs.floor)

	must.ErrorContains(t, b.Insert(TableJobs, job), "after commit")
	b.Abort() // harmless after Commit
}

func TestRowRestore_BadRowIsAnError(t *testing.T) {
	b, err := NewRowRestore()
	must.NoError(t, err)
	defer b.Abort()
	must.ErrorContains(t, b.Insert("no_such_table", &structs.Job{}), "no_such_table")
}
