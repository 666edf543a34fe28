package state

import (
	"slices"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestUpsertEvals_Indexes(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))

	eval := mockEval(job, structs.EvalStatusPending)
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{eval}))
	got, err := s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{2, 2}, []uint64{got.CreateIndex, got.ModifyIndex})

	update := eval.Copy()
	update.Status = structs.EvalStatusComplete
	update.CreateIndex = 0
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{update}))
	got, err = s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{2, 3}, []uint64{got.CreateIndex, got.ModifyIndex})
	must.Eq(t, structs.EvalStatusComplete, got.Status)

	must.Eq(t, map[string]uint64{
		TableJobs:       3, // pending with no evals, then dead
		TableJobVersion: 1,
		TableJobSummary: 1,
		TableEvals:      3,
	}, indexTable(t, s))
}

func TestEvalReads(t *testing.T) {
	s := testStore(t)
	web, webapp := mockJob("web"), mockJob("webapp")
	must.NoError(t, s.UpsertJob(1, web))
	must.NoError(t, s.UpsertJob(2, webapp))
	e1 := mockEval(web, structs.EvalStatusComplete)
	e2 := mockEval(web, structs.EvalStatusPending)
	e3 := mockEval(webapp, structs.EvalStatusPending)
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{e1, e2}))
	must.NoError(t, s.UpsertEvals(4, []*structs.Evaluation{e3}))

	ids := func(evals []*structs.Evaluation, err error) []string {
		t.Helper()
		must.NoError(t, err)
		out := []string{}
		for _, e := range evals {
			out = append(out, e.ID)
		}
		return out
	}
	// "web" must not pick up the evals of "webapp".
	must.SliceContainsAll(t, []string{e1.ID, e2.ID}, ids(s.EvalsByJob(nil, "default", "web")))
	must.Eq(t, []string{e3.ID}, ids(s.EvalsByJob(nil, "default", "webapp")))
	must.Eq(t, []string{}, ids(s.EvalsByJob(nil, "default", "we")))

	must.Eq(t, []string{e3.ID}, ids(s.EvalsByIDPrefix(nil, "default", e3.ID[:7])))
	must.Eq(t, []string{e3.ID}, ids(s.EvalsByIDPrefix(nil, "*", e3.ID[:10])))
	must.Eq(t, []string{}, ids(s.EvalsByIDPrefix(nil, "prod", e3.ID[:10])))
	// By namespace, in ID order, without a namespace whose name starts
	// with this one's.
	other := mockEval(web, structs.EvalStatusPending)
	other.Namespace = "default2"
	must.NoError(t, s.UpsertEvals(5, []*structs.Evaluation{other}))
	want := []string{e1.ID, e2.ID, e3.ID}
	slices.Sort(want)
	must.Eq(t, want, ids(s.EvalsByNamespace(nil, "default")))
	must.Eq(t, []string{other.ID}, ids(s.EvalsByNamespace(nil, "default2")))
	must.NoError(t, s.DeleteEval(6, []string{other.ID}, nil))

	all := ids(s.Evals(nil))
	must.SliceLen(t, 3, all)
	must.Eq(t, e3.ID, all[2], must.Sprint("evals list in creation order"))

	missing, err := s.EvalByID(nil, newID())
	must.NoError(t, err)
	must.Nil(t, missing)
}

func TestUpsertEvals_CompleteCancelsBlocked(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	blocked := mockEval(job, structs.EvalStatusBlocked)
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{blocked}))
	must.Eq(t, structs.JobStatusPending, jobStatus(t, s, "default", "web"))

	// A complete eval that still failed to place keeps the blocked one.
	failed := mockEval(job, structs.EvalStatusComplete)
	failed.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {NodesEvaluated: 3, NodesExhausted: 3}}
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{failed}))
	got, err := s.EvalByID(nil, blocked.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusBlocked, got.Status)

	done := mockEval(job, structs.EvalStatusComplete)
	must.NoError(t, s.UpsertEvals(4, []*structs.Evaluation{done}))
	got, err = s.EvalByID(nil, blocked.ID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusCancelled, got.Status)
	must.Eq(t, 4, got.ModifyIndex)
	must.Eq(t, structs.JobStatusDead, jobStatus(t, s, "default", "web"))
}

func TestDeleteEval(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	eval := mockEval(job, structs.EvalStatusComplete)
	must.NoError(t, s.UpsertEvals(2, []*structs.Evaluation{eval}))
	alloc := mockAlloc(job, newID(), eval.ID, structs.AllocClientStatusComplete)
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{alloc}))

	must.NoError(t, s.DeleteEval(4, []string{eval.ID, newID()}, []string{alloc.ID}))
	gotEval, err := s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Nil(t, gotEval)
	gotAlloc, err := s.AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Nil(t, gotAlloc)
	idx := indexTable(t, s)
	must.Eq(t, 4, idx[TableEvals])
	must.Eq(t, 4, idx[TableAllocs])
	must.Eq(t, structs.JobStatusDead, jobStatus(t, s, "default", "web"))
}

func TestUpsertEvals_Errors(t *testing.T) {
	job := mockJob("web")
	cases := []struct {
		name string
		eval func() *structs.Evaluation
		want string
	}{
		{"nil", func() *structs.Evaluation { return nil }, "upsert eval: eval is nil"},
		{"no ID", func() *structs.Evaluation { e := mockEval(job, "pending"); e.ID = ""; return e }, "upsert eval: missing eval ID"},
		{"ID not a UUID", func() *structs.Evaluation { e := mockEval(job, "pending"); e.ID = "e1"; return e }, `upsert eval "e1":`},
		{"no namespace", func() *structs.Evaluation { e := mockEval(job, "pending"); e.Namespace = ""; return e }, "missing namespace"},
		{"no job", func() *structs.Evaluation { e := mockEval(job, "pending"); e.JobID = ""; return e }, "missing job ID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			good := mockEval(job, structs.EvalStatusPending)
			err := s.UpsertEvals(1, []*structs.Evaluation{good, tc.eval()})
			must.ErrorContains(t, err, tc.want)
			must.MapEmpty(t, dumpState(t, &s.reader))
		})
	}
}

func TestUpsertJobWithEval_IsAtomic(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	bad := mockEval(job, structs.EvalStatusPending)
	bad.Namespace = ""
	err := s.UpsertJobWithEval(1, job, bad)
	must.ErrorContains(t, err, "missing namespace")
	must.MapEmpty(t, dumpState(t, &s.reader), must.Sprint("the job must not be written without its eval"))
}
