package state

import (
	"testing"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestUpsertPeriodicLaunch(t *testing.T) {
	st, err := NewStateStore()
	must.NoError(t, err)
	parent := &structs.Job{ID: "cron", Namespace: "default", Type: structs.JobTypeBatch,
		Periodic: &structs.PeriodicConfig{Enabled: true, Specs: []string{"* * * * *"}}}
	must.NoError(t, st.UpsertJob(1, parent))

	ws := memdb.NewWatchSet()
	l, err := st.PeriodicLaunchByID(ws, "default", "cron")
	must.NoError(t, err)
	must.Nil(t, l)

	child := &structs.Job{ID: structs.PeriodicChildID("cron", 60), ParentID: "cron", Namespace: "default", Type: structs.JobTypeBatch}
	eval := &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: "default", JobID: child.ID, Type: structs.JobTypeBatch,
		TriggeredBy: structs.EvalTriggerPeriodicJob, Status: structs.EvalStatusPending}
	must.NoError(t, st.UpsertPeriodicLaunch(5, child, eval, &structs.PeriodicLaunch{ID: "cron", Namespace: "default", Launch: 60e9}))
	must.True(t, WatchFired(ws))

	l, err = st.PeriodicLaunchByID(nil, "default", "cron")
	must.NoError(t, err)
	must.Eq(t, int64(60e9), l.Launch)
	must.Eq(t, uint64(5), l.CreateIndex)
	gotChild, err := st.JobByID(nil, "default", child.ID)
	must.NoError(t, err)
	must.Eq(t, structs.JobStatusPending, gotChild.Status)
	gotEval, err := st.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, uint64(5), gotEval.JobModifyIndex)
	summary, err := st.JobSummaryByID(nil, "default", "cron")
	must.NoError(t, err)
	must.Eq(t, int64(1), summary.Children.Pending)
	idx, err := st.Index(TablePeriodicLaunch)
	must.NoError(t, err)
	must.Eq(t, uint64(5), idx)

	// A second launch keeps the record's CreateIndex.
	must.NoError(t, st.UpsertPeriodicLaunch(7, nil, nil, &structs.PeriodicLaunch{ID: "cron", Namespace: "default", Launch: 120e9}))
	l, err = st.PeriodicLaunchByID(nil, "default", "cron")
	must.NoError(t, err)
	must.Eq(t, int64(120e9), l.Launch)
	must.Eq(t, uint64(5), l.CreateIndex)
	must.Eq(t, uint64(7), l.ModifyIndex)

	// The launch record survives a snapshot and restore.
	restored := restoreCopy(t, st)
	launches, err := restored.PeriodicLaunches(nil)
	must.NoError(t, err)
	must.Len(t, 1, launches)
	must.Eq(t, *l, *launches[0])

	must.Error(t, st.UpsertPeriodicLaunch(8, nil, nil, &structs.PeriodicLaunch{Namespace: "default"}))

	// Purging the parent drops its launch record.
	must.NoError(t, st.DeleteJob(9, "default", "cron"))
	l, err = st.PeriodicLaunchByID(nil, "default", "cron")
	must.NoError(t, err)
	must.Nil(t, l)
}
