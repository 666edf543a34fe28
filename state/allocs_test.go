package state

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestAllocIndexes_PlanApplyAndClientUpdate(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	node := mockNode()
	must.NoError(t, s.UpsertNode(2, node))

	// Placement: the plan's alloc has no Job of its own.
	alloc := mockAlloc(job, node.ID, newID(), structs.AllocClientStatusPending)
	alloc.Job = nil
	createTime := alloc.CreateTime
	must.NoError(t, s.UpsertPlanResults(20, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{alloc},
		Job:           job,
	}))
	got, err := s.AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{20, 20, 20}, []uint64{got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex})
	must.Eq(t, job, got.Job)

	// Client update: ModifyIndex moves, AllocModifyIndex stays.
	must.NoError(t, s.UpdateAllocsFromClient(21, []*structs.Allocation{clientUpdate(alloc, structs.AllocClientStatusRunning)}))
	got, err = s.AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{20, 21, 20}, []uint64{got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex})
	must.Eq(t, structs.AllocClientStatusRunning, got.ClientStatus)
	must.Eq(t, structs.TaskStateRunning, got.TaskStates["server"].State)

	// In-place update from a later plan: CreateIndex and CreateTime stay,
	// and the scheduler's stale copy of the client fields does not win.
	update := mockAlloc(job, node.ID, newID(), structs.AllocClientStatusPending)
	update.ID = alloc.ID
	update.CreateTime = createTime + 1_000_000
	update.DesiredDescription = "updated in place"
	must.NoError(t, s.UpsertPlanResults(22, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{update}}))
	got, err = s.AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{20, 22, 22}, []uint64{got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex})
	must.Eq(t, createTime, got.CreateTime)
	must.Eq(t, structs.AllocClientStatusRunning, got.ClientStatus)
	must.MapLen(t, 1, got.TaskStates)
	must.Eq(t, "updated in place", got.DesiredDescription)

	// Stop from a plan: merged onto the stored alloc.
	stop := *got
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	stop.DesiredDescription = "alloc is lost since its node is down"
	stop.ClientStatus = structs.AllocClientStatusLost
	stop.TaskStates = nil
	must.NoError(t, s.UpsertPlanResults(23, &structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.Allocation{&stop}}))
	got, err = s.AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{20, 23, 23}, []uint64{got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex})
	must.Eq(t, structs.AllocDesiredStatusStop, got.DesiredStatus)
	must.Eq(t, structs.AllocClientStatusLost, got.ClientStatus)
	must.MapLen(t, 1, got.TaskStates)

	must.Eq(t, map[string]uint64{
		TableJobs:       23, // running from 20, pending again once the alloc is lost
		TableJobVersion: 1,
		TableJobSummary: 23,
		TableNodes:      2,
		TableAllocs:     23,
	}, indexTable(t, s))
	must.Eq(t, structs.JobStatusPending, jobStatus(t, s, "default", "web"), must.Sprint("no eval was ever written"))
}

func TestUpsertPlanResults_BumpsEvalAndWritesEvals(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	eval := mockEval(job, structs.EvalStatusPending)
	must.NoError(t, s.UpsertJobWithEval(1, job, eval))

	blocked := mockEval(job, structs.EvalStatusBlocked)
	blocked.PreviousEval = eval.ID
	must.NoError(t, s.UpsertPlanResults(5, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{mockAlloc(job, newID(), eval.ID, structs.AllocClientStatusPending)},
		EvalID:        eval.ID,
		Evals:         []*structs.Evaluation{blocked},
	}))
	got, err := s.EvalByID(nil, eval.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{1, 5}, []uint64{got.CreateIndex, got.ModifyIndex})
	gotBlocked, err := s.EvalByID(nil, blocked.ID)
	must.NoError(t, err)
	must.Eq(t, []uint64{5, 5}, []uint64{gotBlocked.CreateIndex, gotBlocked.ModifyIndex})
	allocs, err := s.AllocsByEval(nil, eval.ID)
	must.NoError(t, err)
	must.SliceLen(t, 1, allocs)
	must.Eq(t, 5, indexTable(t, s)[TableEvals])
}

// TestAllocsByNamespace: a namespace lists its own allocs by ID, and one
// whose name extends another's ("default2") is its own.
func TestAllocsByNamespace(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	longer := mockJob("web")
	longer.Namespace = "default2"
	must.NoError(t, s.UpsertNamespaces(2, []*structs.Namespace{{Name: "default2"}}))
	must.NoError(t, s.UpsertJob(3, longer))
	node := newID()
	var def []string
	for range 5 {
		a := mockAlloc(job, node, newID(), structs.AllocClientStatusRunning)
		def = append(def, a.ID)
		must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a}))
	}
	slices.Sort(def)
	more := []*structs.Allocation{
		mockAlloc(longer, node, newID(), structs.AllocClientStatusRunning),
		mockAlloc(longer, node, newID(), structs.AllocClientStatusRunning),
	}
	more[0].ID, more[1].ID = "ffffffff"+more[0].ID[8:], "00000000"+more[1].ID[8:]
	must.NoError(t, s.UpsertAllocs(5, more))

	ids := func(namespace string) []string {
		t.Helper()
		allocs, err := s.AllocsByNamespace(nil, namespace)
		return allocIDs(t, allocs, err)
	}
	must.Eq(t, def, ids("default"))
	must.Eq(t, []string{more[1].ID, more[0].ID}, ids("default2"))
	must.Eq(t, []string{}, ids("defaul"))
}

func TestAllocReads(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	nodeA, nodeB := newID(), newID()
	evalID := newID()
	running := mockAlloc(job, nodeA, evalID, structs.AllocClientStatusRunning)
	done := mockAlloc(job, nodeA, evalID, structs.AllocClientStatusComplete)
	other := mockAlloc(job, nodeB, newID(), structs.AllocClientStatusPending)
	must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{running, done}))
	must.NoError(t, s.UpsertAllocs(3, []*structs.Allocation{other}))

	ids := func(allocs []*structs.Allocation, err error) []string {
		t.Helper()
		return allocIDs(t, allocs, err)
	}
	must.SliceContainsAll(t, []string{running.ID, done.ID}, ids(s.AllocsByNode(nil, nodeA)))
	must.Eq(t, []string{running.ID}, ids(s.AllocsByNodeTerminal(nil, nodeA, false)))
	must.Eq(t, []string{done.ID}, ids(s.AllocsByNodeTerminal(nil, nodeA, true)))
	must.SliceContainsAll(t, []string{running.ID, done.ID}, ids(s.AllocsByEval(nil, evalID)))
	must.SliceLen(t, 3, ids(s.AllocsByJob(nil, "default", "web", false)))
	must.SliceLen(t, 3, ids(s.AllocsByNamespace(nil, "default")))
	must.Eq(t, []string{other.ID}, ids(s.AllocsByIDPrefix(nil, "*", other.ID[:5])))
	must.Eq(t, []string{other.ID}, ids(s.AllocsByIDPrefix(nil, "default", other.ID[:8])))
	must.Eq(t, []string{}, ids(s.AllocsByIDPrefix(nil, "prod", other.ID[:8])))

	// Allocs lists in creation order.
	all := ids(s.Allocs(nil))
	must.SliceLen(t, 3, all)
	must.Eq(t, other.ID, all[2])

	// Purge and register the job again: old allocs belong to the old job.
	must.NoError(t, s.DeleteJob(4, "default", "web"))
	newJob := mockJob("web")
	must.NoError(t, s.UpsertJob(5, newJob))
	must.NoError(t, s.UpsertAllocs(6, []*structs.Allocation{mockAlloc(newJob, nodeB, newID(), structs.AllocClientStatusPending)}))
	must.SliceLen(t, 1, ids(s.AllocsByJob(nil, "default", "web", false)))
	must.SliceLen(t, 4, ids(s.AllocsByJob(nil, "default", "web", true)))
	must.Eq(t, structs.TaskGroupSummary{Starting: 1}, groupSummary(t, s, newJob, "web"),
		must.Sprint("the new job's summary does not count the old job's allocs"))
}

func TestAllocWrites_Errors(t *testing.T) {
	setup := func(t *testing.T) (*StateStore, *structs.Job) {
		s := testStore(t)
		job := mockJob("web")
		must.NoError(t, s.UpsertJob(1, job))
		must.NoError(t, s.UpsertAllocs(2, []*structs.Allocation{mockAlloc(job, newID(), newID(), structs.AllocClientStatusRunning)}))
		return s, job
	}
	cases := []struct {
		name  string
		write func(s *StateStore, job *structs.Job) error
		want  string
	}{
		{
			name: "alloc of unknown job",
			write: func(s *StateStore, job *structs.Job) error {
				ok := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
				orphan := mockAlloc(mockJob("ghost"), newID(), newID(), structs.AllocClientStatusPending)
				orphan.Job = nil
				return s.UpsertAllocs(3, []*structs.Allocation{ok, orphan})
			},
			want: `job "ghost" in namespace "default": not found`,
		},
		{
			name: "alloc without namespace",
			write: func(s *StateStore, job *structs.Job) error {
				a := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
				a.Namespace = ""
				return s.UpsertAllocs(3, []*structs.Allocation{a})
			},
			want: "missing namespace",
		},
		{
			name: "alloc ID not a UUID",
			write: func(s *StateStore, job *structs.Job) error {
				a := mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)
				a.ID = "alloc-1"
				return s.UpsertAllocs(3, []*structs.Allocation{a})
			},
			want: "is not a UUID: want 36 characters, got 7",
		},
		{
			name: "nil alloc",
			write: func(s *StateStore, job *structs.Job) error {
				return s.UpsertAllocs(3, []*structs.Allocation{nil})
			},
			want: "upsert alloc: alloc is nil",
		},
		{
			name: "plan stops an unknown alloc",
			write: func(s *StateStore, job *structs.Job) error {
				return s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{
					EvalID:        "e1",
					AllocsUpdated: []*structs.Allocation{mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)},
					AllocsStopped: []*structs.Allocation{mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)},
				})
			},
			want: `apply plan results of eval "e1": stop alloc`,
		},
		{
			name: "nil plan",
			write: func(s *StateStore, job *structs.Job) error {
				return s.UpsertPlanResults(3, nil)
			},
			want: "apply plan results: request is nil",
		},
		{
			name: "plan with an invalid eval",
			write: func(s *StateStore, job *structs.Job) error {
				bad := mockEval(job, structs.EvalStatusBlocked)
				bad.JobID = ""
				return s.UpsertPlanResults(3, &structs.ApplyPlanResultsRequest{
					AllocsUpdated: []*structs.Allocation{mockAlloc(job, newID(), newID(), structs.AllocClientStatusPending)},
					Evals:         []*structs.Evaluation{bad},
				})
			},
			want: "missing job ID",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, job := setup(t)
			before := dumpState(t, &s.reader)
			err := tc.write(s, job)
			must.ErrorContains(t, err, tc.want)
			must.Eq(t, before, dumpState(t, &s.reader), must.Sprint("a failed write leaves nothing behind"))
		})
	}
}

func TestUpdateAllocsFromClient_SkipsUnknownAllocs(t *testing.T) {
	s := testStore(t)
	job := mockJob("web")
	must.NoError(t, s.UpsertJob(1, job))
	gone := mockAlloc(job, newID(), newID(), structs.AllocClientStatusRunning)
	must.NoError(t, s.UpdateAllocsFromClient(2, []*structs.Allocation{clientUpdate(gone, structs.AllocClientStatusComplete)}))
	must.Eq(t, map[string]uint64{TableJobs: 1, TableJobVersion: 1, TableJobSummary: 1}, indexTable(t, s))
}

func benchmarkAllocs(job *structs.Job, n int) []*structs.Allocation {
	nodes := make([]string, 100)
	for i := range nodes {
		nodes[i] = newID()
	}
	allocs := make([]*structs.Allocation, n)
	for i := range allocs {
		a := mockAlloc(job, nodes[i%len(nodes)], "", structs.AllocClientStatusPending)
		a.Name = fmt.Sprintf("%s.web[%d]", job.ID, i)
		allocs[i] = a
	}
	return allocs
}

func BenchmarkUpsertAllocs10kOneTxn(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s := testStore(b)
		job := mockJob("bench")
		must.NoError(b, s.UpsertJob(1, job))
		allocs := benchmarkAllocs(job, 10_000)
		b.StartTimer()

		must.NoError(b, s.UpsertAllocs(2, allocs))
	}
	b.ReportMetric(float64(b.N*10_000)/b.Elapsed().Seconds(), "allocs/s")
}

func BenchmarkUpsertAllocs10kOneAtATime(b *testing.B) {
	for range b.N {
		b.StopTimer()
		s := testStore(b)
		job := mockJob("bench")
		must.NoError(b, s.UpsertJob(1, job))
		allocs := benchmarkAllocs(job, 10_000)
		b.StartTimer()

		for i, a := range allocs {
			must.NoError(b, s.UpsertAllocs(uint64(2+i), []*structs.Allocation{a}))
		}
	}
	b.ReportMetric(float64(b.N*10_000)/b.Elapsed().Seconds(), "upserts/s")
}

// TestAllocsByEval: an eval's allocs come from its job's, only those it
// placed; once the eval is deleted (its allocs kept) a scan still finds
// them; an ID that is not a UUID finds none and is no error.
func TestAllocsByEval(t *testing.T) {
	s := testStore(t)
	web, api := mockJob("web"), mockJob("api")
	must.NoError(t, s.UpsertJob(1, web))
	must.NoError(t, s.UpsertJob(2, api))
	first, second := mockEval(web, structs.EvalStatusComplete), mockEval(web, structs.EvalStatusComplete)
	other := mockEval(api, structs.EvalStatusComplete)
	must.NoError(t, s.UpsertEvals(3, []*structs.Evaluation{first, second, other}))
	nodeA, nodeB := newID(), newID()
	a1 := mockAlloc(web, nodeA, first.ID, structs.AllocClientStatusRunning)
	a2 := mockAlloc(web, nodeB, first.ID, structs.AllocClientStatusComplete)
	b1 := mockAlloc(web, nodeA, second.ID, structs.AllocClientStatusRunning)
	c1 := mockAlloc(api, nodeA, other.ID, structs.AllocClientStatusRunning)
	must.NoError(t, s.UpsertAllocs(4, []*structs.Allocation{a1, a2, b1, c1}))

	ids := func(evalID string) []string {
		t.Helper()
		allocs, err := s.AllocsByEval(nil, evalID)
		out := allocIDs(t, allocs, err)
		slices.Sort(out)
		return out
	}
	want := []string{a1.ID, a2.ID}
	slices.Sort(want)
	must.Eq(t, want, ids(first.ID))
	must.Eq(t, []string{b1.ID}, ids(second.ID))
	must.Eq(t, []string{c1.ID}, ids(other.ID))

	must.NoError(t, s.DeleteEval(5, []string{first.ID}, nil))
	must.Eq(t, want, ids(first.ID))
	must.Eq(t, []string{}, ids("not-a-uuid"))
	must.Eq(t, []string{}, ids(newID()))

	// The watch set fires when an alloc of the eval changes.
	ws := memdb.NewWatchSet()
	_, err := s.AllocsByEval(ws, second.ID)
	must.NoError(t, err)
	b2 := mockAlloc(web, nodeB, second.ID, structs.AllocClientStatusPending)
	must.NoError(t, s.UpsertAllocs(6, []*structs.Allocation{b2}))
	must.False(t, ws.Watch(time.After(5*time.Second)))
}

// allocIDs returns the IDs of allocs in their order (empty, not nil, for
// none), failing the test on err.
func allocIDs(t *testing.T, allocs []*structs.Allocation, err error) []string {
	t.Helper()
	must.NoError(t, err)
	out := []string{}
	for _, a := range allocs {
		out = append(out, a.ID)
	}
	return out
}
