package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestUpsertJob_Indexes(t *testing.T) {
	s := testStore(t)

	// New job.
	must.NoError(t, s.UpsertJob(10, mockJob("web")))
	job, err := s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, []uint64{10, 10, 10, 0}, []uint64{job.CreateIndex, job.ModifyIndex, job.JobModifyIndex, job.Version})

	// Same spec again: only ModifyIndex moves.
	must.NoError(t, s.UpsertJob(11, mockJob("web")))
	job, err = s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, []uint64{10, 11, 10, 0}, []uint64{job.CreateIndex, job.ModifyIndex, job.JobModifyIndex, job.Version})

	// Changed spec: new version.
	changed := mockJob("web")
	changed.TaskGroups[0].Count = 5
	must.NoError(t, s.UpsertJob(12, changed))
	job, err = s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, []uint64{10, 12, 12, 1}, []uint64{job.CreateIndex, job.ModifyIndex, job.JobModifyIndex, job.Version})

	versions, err := s.JobVersionsByID(nil, "default", "web")
	must.NoError(t, err)
	must.SliceLen(t, 2, versions)
	must.Eq(t, 1, versions[0].Version)
	must.Eq(t, 0, versions[1].Version)
	must.Eq(t, 2, versions[1].TaskGroups[0].Count)

	v0, err := s.JobByIDAndVersion(nil, "default", "web", 0)
	must.NoError(t, err)
	must.Eq(t, 11, v0.ModifyIndex)

	must.Eq(t, map[string]uint64{
		TableJobs:       12,
		TableJobVersion: 12,
		TableJobSummary: 10,
	}, indexTable(t, s))
}

func TestUpsertJob_KeepsSixVersions(t *testing.T) {
	s := testStore(t)
	for i := range 9 {
		job := mockJob("web")
		job.TaskGroups[0].Count = i + 1
		must.NoError(t, s.UpsertJob(uint64(100+i), job))
	}
	// A job whose ID extends "web" must not show up among its versions.
	must.NoError(t, s.UpsertJob(200, mockJob("webapp")))

	versions, err := s.JobVersionsByID(nil, "default", "web")
	must.NoError(t, err)
	var got []uint64
	for _, v := range versions {
		got = append(got, v.Version)
	}
	must.Eq(t, []uint64{8, 7, 6, 5, 4, 3}, got)

	old, err := s.JobByIDAndVersion(nil, "default", "web", 2)
	must.NoError(t, err)
	must.Nil(t, old)
}

func TestUpsertJob_DefaultsNodePool(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	job.NodePool = ""
	must.NoError(t, s.UpsertJob(1, job))
	stored, err := s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, structs.DefaultNodePool, stored.NodePool)

	// Re-registering with the pool left empty is not a spec change.
	again := mockJob("web")
	again.NodePool = ""
	must.NoError(t, s.UpsertJob(2, again))
	stored, err = s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, 0, stored.Version)
}

func TestJobReads(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJob(1, mockJob("api")))
	must.NoError(t, s.UpsertJob(2, mockJob("app")))
	must.NoError(t, s.UpsertJob(3, mockPeriodicJob("cron")))
	must.NoError(t, s.UpsertNamespaces(4, []*structs.Namespace{{Name: "prod"}}))
	other := mockJob("api")
	other.Namespace = "prod"
	must.NoError(t, s.UpsertJob(4, other))

	ids := func(jobs []*structs.Job, err error) []string {
		t.Helper()
		must.NoError(t, err)
		var out []string
		for _, j := range jobs {
			out = append(out, j.Namespace+"/"+j.ID)
		}
		return out
	}
	must.Eq(t, []string{"default/api", "default/app", "default/cron", "prod/api"}, ids(s.Jobs(nil)))
	must.Eq(t, []string{"prod/api"}, ids(s.JobsByNamespace(nil, "prod")))
	must.Eq(t, []string{"default/api", "default/app"}, ids(s.JobsByIDPrefix(nil, "default", "ap")))
	must.Eq(t, []string{"default/cron"}, ids(s.PeriodicJobs(nil)))
	// The periodic index holds only periodic jobs: a job that stops being
	// periodic leaves it.
	cron, err := s.JobByID(nil, "default", "cron")
	must.NoError(t, err)
	plain := cron.Copy()
	plain.Periodic = nil
	must.NoError(t, s.UpsertJob(20, plain))
	must.SliceEmpty(t, ids(s.PeriodicJobs(nil)))
	must.NoError(t, s.UpsertJob(21, cron.Copy()))
	must.Eq(t, []string{"default/cron"}, ids(s.PeriodicJobs(nil)))

	missing, err := s.JobByID(nil, "default", "nope")
	must.NoError(t, err)
	must.Nil(t, missing)
}

func TestDeleteJob_Purges(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJob(1, mockJob("web")))
	changed := mockJob("web")
	changed.Priority = 70
	must.NoError(t, s.UpsertJob(2, changed))

	must.NoError(t, s.DeleteJob(3, "default", "web"))

	job, err := s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Nil(t, job)
	versions, err := s.JobVersionsByID(nil, "default", "web")
	must.NoError(t, err)
	must.SliceEmpty(t, versions)
	summary, err := s.JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.Nil(t, summary)
	must.Eq(t, map[string]uint64{TableJobs: 3, TableJobVersion: 3, TableJobSummary: 3}, indexTable(t, s))

	err = s.DeleteJob(4, "default", "web")
	must.ErrorIs(t, err, ErrNotFound)
	must.ErrorContains(t, err, `delete job "web" in namespace "default"`)
}

func TestJobStatus_Rules(t *testing.T) {
	const (
		pending  = structs.JobStatusPending
		running  = structs.JobStatusRunning
		dead     = structs.JobStatusDead
		complete = structs.EvalStatusComplete
	)
	type allocSpec struct{ desired, client string }

	cases := []struct {
		name   string
		job    func() *structs.Job
		evals  []string
		allocs []allocSpec
		want   string
	}{
		{name: "nothing yet", job: func() *structs.Job { return mockJob("j") }, want: pending},
		{name: "pending eval", job: func() *structs.Job { return mockJob("j") }, evals: []string{structs.EvalStatusPending}, want: pending},
		{name: "blocked eval", job: func() *structs.Job { return mockJob("j") }, evals: []string{complete, structs.EvalStatusBlocked}, want: pending},
		{name: "complete eval only", job: func() *structs.Job { return mockJob("j") }, evals: []string{complete}, want: dead},
		{name: "failed eval only", job: func() *structs.Job { return mockJob("j") }, evals: []string{structs.EvalStatusFailed}, want: dead},
		{
			name: "running alloc", job: func() *structs.Job { return mockJob("j") }, evals: []string{complete},
			allocs: []allocSpec{{structs.AllocDesiredStatusRun, structs.AllocClientStatusRunning}}, want: running,
		},
		{
			name: "pending alloc beats pending eval", job: func() *structs.Job { return mockJob("j") }, evals: []string{structs.EvalStatusPending},
			allocs: []allocSpec{{structs.AllocDesiredStatusRun, structs.AllocClientStatusPending}}, want: running,
		},
		{
			name: "all allocs complete", job: func() *structs.Job { return mockJob("j") }, evals: []string{complete},
			allocs: []allocSpec{{structs.AllocDesiredStatusRun, structs.AllocClientStatusComplete}, {structs.AllocDesiredStatusRun, structs.AllocClientStatusFailed}}, want: dead,
		},
		{
			name: "alloc told to stop is terminal", job: func() *structs.Job { return mockJob("j") }, evals: []string{complete},
			allocs: []allocSpec{{structs.AllocDesiredStatusStop, structs.AllocClientStatusRunning}}, want: dead,
		},
		{
			name: "stopped job without evals", want: dead,
			job: func() *structs.Job { j := mockJob("j"); j.Stop = true; return j },
		},
		{
			name: "stopped job with running alloc", want: running, evals: []string{complete},
			job:    func() *structs.Job { j := mockJob("j"); j.Stop = true; return j },
			allocs: []allocSpec{{structs.AllocDesiredStatusRun, structs.AllocClientStatusRunning}},
		},
		{
			name: "system job", want: running, evals: []string{complete},
			job: func() *structs.Job { j := mockJob("j"); j.Type = structs.JobTypeSystem; return j },
		},
		{
			name: "stopped system job", want: dead, evals: []string{structs.EvalStatusPending},
			job: func() *structs.Job { j := mockJob("j"); j.Type = structs.JobTypeSystem; j.Stop = true; return j },
		},
		{name: "periodic job", job: func() *structs.Job { return mockPeriodicJob("j") }, want: running},
		{
			name: "stopped periodic job", want: dead,
			job: func() *structs.Job { j := mockPeriodicJob("j"); j.Stop = true; return j },
		},
		{name: "parameterized job", job: func() *structs.Job { return mockParameterizedJob("j") }, evals: []string{complete}, want: running},
		{
			name: "dispatched child follows the ordinary rules", want: pending,
			job: func() *structs.Job { j := mockParameterizedJob("j"); j.Dispatched = true; return j },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := tc.job()
			must.NoError(t, s.UpsertJob(1, job))
			var evals []*structs.Evaluation
			for _, status := range tc.evals {
				evals = append(evals, mockEval(job, status))
			}
			must.NoError(t, s.UpsertEvals(2, evals))
			var allocs []*structs.Allocation
			for _, a := range tc.allocs {
				alloc := mockAlloc(job, newID(), "", a.client)
				alloc.DesiredStatus = a.desired
				allocs = append(allocs, alloc)
			}
			must.NoError(t, s.UpsertAllocs(3, allocs))
			must.Eq(t, tc.want, jobStatus(t, s, job.Namespace, job.ID))
		})
	}
}

func TestJobStatus_Lifecycle(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	must.NoError(t, s.UpsertNode(1, node))

	// Register: the job waits for its eval.
	job := mockBatchJob("batch")
	eval := mockEval(job, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(10, job, eval))
	must.Eq(t, structs.JobStatusPending, jobStatus(t, s, "default", "batch"))
	stored, err := s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, 10, stored.JobModifyIndex)

	// Plan applied: an alloc placed and the eval complete.
	alloc := mockAlloc(job, node.ID, eval.ID, structs.AllocClientStatusPending)
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	must.NoError(t, s.UpsertPlanResults(11, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{alloc},
		EvalID:        eval.ID,
		Evals:         []*structs.Evaluation{done},
	}))
	must.Eq(t, structs.JobStatusRunning, jobStatus(t, s, "default", "batch"))

	must.NoError(t, s.UpdateAllocsFromClient(12, []*structs.Allocation{clientUpdate(alloc, structs.AllocClientStatusRunning)}))
	must.Eq(t, structs.JobStatusRunning, jobStatus(t, s, "default", "batch"))

	// The alloc completes: nothing left to run or evaluate.
	must.NoError(t, s.UpdateAllocsFromClient(13, []*structs.Allocation{clientUpdate(alloc, structs.AllocClientStatusComplete)}))
	stored2, err := s.JobByID(nil, "default", "batch")
	must.NoError(t, err)
	must.Eq(t, structs.JobStatusDead, stored2.Status)
	must.Eq(t, 13, stored2.ModifyIndex, must.Sprint("a status change bumps the job's ModifyIndex"))
	must.Eq(t, 10, stored2.JobModifyIndex)

	// Re-registering a dead job with a new eval makes it pending again.
	again := mockBatchJob("batch")
	again.Priority = 80
	must.NoError(t, s.UpsertJobWithEval(14, again, mockEval(again, structs.EvalStatusPending)))
	must.Eq(t, structs.JobStatusPending, jobStatus(t, s, "default", "batch"))

	// Garbage collection of the evals and the alloc leaves a dead job.
	evals, err := s.EvalsByJob(nil, "default", "batch")
	must.NoError(t, err)
	var evalIDs []string
	for _, e := range evals {
		evalIDs = append(evalIDs, e.ID)
	}
	must.NoError(t, s.DeleteEval(15, evalIDs, []string{alloc.ID}))
	must.Eq(t, structs.JobStatusDead, jobStatus(t, s, "default", "batch"))
}

func TestJobStatus_ParentChildren(t *testing.T) {
	s := testStore(t)
	parent := mockPeriodicJob("cron")
	must.NoError(t, s.UpsertJob(1, parent))

	children := func() structs.JobChildrenSummary {
		t.Helper()
		summary, err := s.JobSummaryByID(nil, "default", "cron")
		must.NoError(t, err)
		must.NotNil(t, summary.Children)
		return *summary.Children
	}
	must.Eq(t, structs.JobChildrenSummary{}, children())

	c1 := mockChildJob(parent, "periodic-1")
	c2 := mockChildJob(parent, "periodic-2")
	must.NoError(t, s.UpsertJob(2, c1))
	must.NoError(t, s.UpsertJob(3, c2))
	must.Eq(t, structs.JobChildrenSummary{Pending: 2}, children())

	// c1 gets an alloc running: running.
	eval := mockEval(c1, structs.EvalStatusComplete)
	must.NoError(t, s.UpsertEvals(4, []*structs.Evaluation{eval}))
	must.Eq(t, structs.JobChildrenSummary{Pending: 1, Dead: 1}, children())
	alloc := mockAlloc(c1, newID(), eval.ID, structs.AllocClientStatusRunning)
	must.NoError(t, s.UpsertAllocs(5, []*structs.Allocation{alloc}))
	must.Eq(t, structs.JobChildrenSummary{Pending: 1, Running: 1}, children())

	// c1 finishes: dead.
	must.NoError(t, s.UpdateAllocsFromClient(6, []*structs.Allocation{clientUpdate(alloc, structs.AllocClientStatusComplete)}))
	must.Eq(t, structs.JobChildrenSummary{Pending: 1, Dead: 1}, children())

	// Purging c2 removes it from the counts.
	must.NoError(t, s.DeleteJob(7, "default", c2.ID))
	must.Eq(t, structs.JobChildrenSummary{Dead: 1}, children())

	summary, err := s.JobSummaryByID(nil, "default", "cron")
	must.NoError(t, err)
	must.Eq(t, 7, summary.ModifyIndex)
}

func TestUpsertJob_Errors(t *testing.T) {
	noNamespace := mockJob("web")
	noNamespace.Namespace = ""
	cases := []struct {
		name string
		job  *structs.Job
		want string
	}{
		{"nil job", nil, "upsert job: job is nil"},
		{"no ID", mockJob(""), "upsert job: missing job ID"},
		{"no namespace", noNamespace, `upsert job "web": missing namespace`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			err := s.UpsertJob(1, tc.job)
			must.EqError(t, err, tc.want)
			must.MapEmpty(t, dumpState(t, &s.reader))
		})
	}
}

func TestUpsertJob_UnchangedAfterRestore(t *testing.T) {
	// After a restore (or any msgpack hop) the stored driver config holds
	// int64 where a newly submitted job holds int: not a spec change.
	withPort := func() *structs.Job {
		j := mockJob("web")
		j.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/http", "port": 8080}
		return j
	}
	s := testStore(t)
	must.NoError(t, s.UpsertJob(1, withPort()))
	restored := restoreCopy(t, s)

	must.NoError(t, restored.UpsertJob(2, withPort()))
	job, err := restored.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, []uint64{1, 2, 1, 0}, []uint64{job.CreateIndex, job.ModifyIndex, job.JobModifyIndex, job.Version})

	// Stopping a job is a spec change: it makes a new version.
	stopped := withPort()
	stopped.Stop = true
	must.NoError(t, restored.UpsertJob(3, stopped))
	job, err = restored.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, []uint64{1, 3, 3, 1}, []uint64{job.CreateIndex, job.ModifyIndex, job.JobModifyIndex, job.Version})
	must.Eq(t, structs.JobStatusDead, job.Status)
}
