package batchqueue

import (
	"fmt"
	"iter"
	"runtime"
	"slices"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

func benchEntries(n int) []*structs.BatchQueueEntry {
	out := make([]*structs.BatchQueueEntry, n)
	for i := range out {
		out[i] = &structs.BatchQueueEntry{Namespace: "default", JobID: fmt.Sprintf("job-%07d", i),
			Priority: 1 + i%100, EnqueueIndex: uint64(i + 1)}
	}
	return out
}

// BenchmarkHeap_PushPop is one enqueue and one release on a heap that
// holds n entries: O(log n).
func BenchmarkHeap_PushPop(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		for _, order := range []string{structs.BatchQueueOrderFIFO, structs.BatchQueueOrderPriority} {
			b.Run(fmt.Sprintf("%s/%d", order, n), func(b *testing.B) {
				h := NewHeap(order, benchEntries(n))
				extra := &structs.BatchQueueEntry{Namespace: "default", JobID: "x", Priority: 50}
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					extra.EnqueueIndex = uint64(n + i + 1)
					h.Push(extra)
					extra = h.Pop()
				}
			})
		}
	}
}

// queuedStore returns a store with the queue on and n queued batch jobs.
func queuedStore(b *testing.B, n int) *state.StateStore {
	st, err := state.NewStateStore()
	if err != nil {
		b.Fatal(err)
	}
	st.SetBatchQueueRouter(Route)
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.BatchQueue.Enabled = true
	if _, err := st.SchedulerSetConfig(1, cfg); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		registerBatch(b, st, uint64(i+2), fmt.Sprintf("job-%07d", i))
	}
	return st
}

// registerBatch writes a one-alloc batch job with its register eval at
// index, as Job.Register does.
func registerBatch(b *testing.B, st *state.StateStore, index uint64, id string) {
	job := batchJob(id, 50, 1)
	ev := &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: 50, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending, CreateTime: 1}
	if err := st.UpsertJobWithEval(index, job, ev); err != nil {
		b.Fatal(err)
	}
}

type nopCommit struct{}

func (nopCommit) Commit(*structs.BatchQueueReleaseRequest) error { return nil }

// BenchmarkQueue_Restore is a new leader's first round over n queued
// workloads: read the table and heap it. The one slot is taken by a
// placing entry, so the round releases nothing.
func BenchmarkQueue_Restore(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := queuedStore(b, n)
			e, _ := st.BatchQueueEntryByJob(nil, "default", "job-0000000")
			blocker := &structs.BatchQueueReleaseRequest{ReleaseTime: time.Now().UnixNano(),
				Release: []structs.BatchQueueRef{{Namespace: "default", JobID: e.JobID, EvalID: e.EvalID}}}
			if _, err := st.BatchQueueApply(uint64(n+10), blocker); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				q := New(Config{State: func() *state.StateStore { return st }, Commit: nopCommit{}})
				r := &runner{q: q}
				if _, err := r.round(memdb.NewWatchSet(), time.Now()); err != nil {
					b.Fatal(err)
				}
				if got := r.lines.Len(); got != n-1 {
					b.Fatalf("heap holds %d, want %d", got, n-1)
				}
				if got := q.Status().Depth[structs.BatchQueueStatusQueued]; got != n-1 {
					b.Fatalf("queued %d, want %d", got, n-1)
				}
			}
		})
	}
}

// instantPlace is a Committer whose releases are placed at once: it
// applies the release, then removes the released entries as the next
// round's Done would.
type instantPlace struct {
	st    *state.StateStore
	index *uint64
}

func (c instantPlace) Commit(req *structs.BatchQueueReleaseRequest) error {
	*c.index++
	if _, err := c.st.BatchQueueApply(*c.index, req); err != nil {
		return err
	}
	*c.index++
	_, err := c.st.BatchQueueApply(*c.index, &structs.BatchQueueReleaseRequest{Done: req.Release})
	return err
}

// BenchmarkQueue_EnqueueRelease is one enqueue (the FSM routing a
// register eval into the table and feeding the row to the queue) and one
// release (a round that pushes the fed row, sees the last release gone,
// pops the head and commits its release) with n workloads queued: the
// queue's whole cost per workload.
func BenchmarkQueue_EnqueueRelease(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := queuedStore(b, n)
			index := uint64(n + 10)
			q := New(Config{State: func() *state.StateStore { return st }, Commit: instantPlace{st, &index}})
			st.SetBatchQueueFeed(q.Feed)
			q.collect(true)
			r := &runner{q: q}
			// The first round rebuilds and releases the head.
			if _, err := r.round(memdb.NewWatchSet(), time.Now()); err != nil {
				b.Fatal(err)
			}
			var roundTime time.Duration
			for i := 0; b.Loop(); i++ {
				index++
				registerBatch(b, st, index, fmt.Sprintf("new-%d", i))
				// The round sees the last release gone (placed), so its
				// slot is free, and releases the head.
				start := time.Now()
				if _, err := r.round(memdb.NewWatchSet(), time.Now()); err != nil {
					b.Fatal(err)
				}
				roundTime += time.Since(start)
			}
			// The leader's own share: the round, with the release commit
			// it applies, without the FSM's job and eval write.
			b.ReportMetric(float64(roundTime.Nanoseconds())/float64(b.N), "round-ns/op")
			b.StopTimer()
			if got := r.lines.Len(); got < n-2 || got > n+1 {
				b.Fatalf("heap holds %d, want about %d", got, n)
			}
		})
	}
}

// BenchmarkState_EnqueueRoute is the FSM cost of routing one register
// eval into a queue that already holds n entries.
func BenchmarkState_EnqueueRoute(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := queuedStore(b, n)
			index := uint64(n + 10)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				index++
				registerBatch(b, st, index, fmt.Sprintf("new-%d", i))
			}
		})
	}
}

// BenchmarkQueue_BytesPerWorkload reports the memory the queue adds per
// queued workload: the state store with the queue on minus the same jobs
// and evals with the queue off.
func BenchmarkQueue_BytesPerWorkload(b *testing.B) {
	const n = 20_000
	measure := func(on bool) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, _ := state.NewStateStore()
		st.SetBatchQueueRouter(Route)
		cfg := structs.DefaultSchedulerConfiguration()
		cfg.BatchQueue.Enabled = on
		_, _ = st.SchedulerSetConfig(1, cfg)
		job := batchJob("shape", 50, 1)
		for i := range n {
			j := job.Copy()
			j.ID = fmt.Sprintf("job-%07d", i)
			ev := &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: j.Namespace, Priority: 50, Type: j.Type,
				TriggeredBy: structs.EvalTriggerJobRegister, JobID: j.ID, Status: structs.EvalStatusPending}
			_ = st.UpsertJobWithEval(uint64(i+2), j, ev)
		}
		q := New(Config{State: func() *state.StateStore { return st }, Commit: nopCommit{}})
		r := &runner{q: q}
		if on {
			_, _ = r.round(memdb.NewWatchSet(), time.Now())
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(st)
		runtime.KeepAlive(r)
		return after.HeapAlloc - before.HeapAlloc
	}
	for b.Loop() {
		off := measure(false)
		on := measure(true)
		b.ReportMetric(float64(int64(on)-int64(off))/n, "bytes/workload")
	}
}

// BenchmarkQueue_ListAndLookup reads the listing (sorts the line) and one
// job's position (one counting pass) with n workloads queued.
func BenchmarkQueue_ListAndLookup(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		st := queuedStore(b, n)
		q := New(Config{State: func() *state.StateStore { return st }, Commit: nopCommit{}})
		r := &runner{q: q}
		if _, err := r.round(memdb.NewWatchSet(), time.Now()); err != nil {
			b.Fatal(err)
		}
		last := fmt.Sprintf("job-%07d", n-1)
		b.Run(fmt.Sprintf("list/%d", n), func(b *testing.B) {
			for b.Loop() {
				if got := len(q.List()); got != n {
					b.Fatalf("listed %d, want %d", got, n)
				}
			}
		})
		b.Run(fmt.Sprintf("lookup/%d", n), func(b *testing.B) {
			for b.Loop() {
				if le := q.Lookup("default", last); le == nil || le.Position != n {
					b.Fatalf("lookup %s: %+v", last, le)
				}
			}
		})
	}
}

// BenchmarkPlan_FairBackfill is one planner round in the fair order
// with n queued entries over 10 namespaces and 10,000 running allocs
// with max_run_duration deadlines, behind a reserved head: the round
// computes the shadow time, then tries the first backfillDepth entries
// (none may backfill, the worst case) and releases nothing.
func BenchmarkPlan_FairBackfill(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const running = 10_000
	cluster := Cluster{Total: structs.ComparableResources{CPU: running * 100, MemoryMB: running * 100}, Usage: map[string]Usage{}}
	for i := range running {
		res := structs.ComparableResources{CPU: 100, MemoryMB: 100}
		cluster.Used.Add(res)
		cluster.Timed = append(cluster.Timed, TimedAlloc{End: t0.Add(time.Duration(i+1) * time.Second), Res: res})
		u := cluster.Usage[fmt.Sprintf("ns-%d", i%10)]
		u.Res.Add(res)
		u.Allocs++
		cluster.Usage[fmt.Sprintf("ns-%d", i%10)] = u
	}
	head := Workload{Entry: &structs.BatchQueueEntry{Namespace: "ns-0", JobID: "big", Release: &structs.BatchQueueRelease{Index: 1}},
		Verdict: Verdict{Status: structs.BatchQueueStatusPlacing, Exhausted: true,
			Missing: structs.ComparableResources{CPU: running * 50, MemoryMB: running * 50}}}
	untimed := Demand{Ask: structs.ComparableResources{CPU: 100, MemoryMB: 100}, Allocs: 1}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			byNS := map[string][]*structs.BatchQueueEntry{}
			for i, e := range benchEntries(n) {
				e.Namespace = fmt.Sprintf("ns-%d", i%10)
				byNS[e.Namespace] = append(byNS[e.Namespace], e)
			}
			for b.Loop() {
				lines := make(map[string]iter.Seq[*structs.BatchQueueEntry], len(byNS))
				for ns, es := range byNS {
					lines[ns] = slices.Values(es)
				}
				d := Plan(Input{
					Config: structs.BatchQueueConfig{Enabled: true, Order: structs.BatchQueueOrderFair,
						ConcurrentPlacements: 8, Backfill: true},
					Now: t0, Released: []Workload{head}, Lines: lines, Cluster: cluster,
					Demand: func(*structs.BatchQueueEntry) Demand { return untimed },
				})
				if d.Reservation == nil || len(d.Release) != 0 {
					b.Fatalf("want a reservation and no release, got %+v", d)
				}
			}
		})
	}
}

// BenchmarkReadCluster is the shell's read of capacity and usage, done
// once per round in which the allocs, nodes or namespaces tables moved:
// 100 nodes and allocs live allocs with max_run_duration deadlines.
func BenchmarkReadCluster(b *testing.B) {
	for _, allocs := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(allocs), func(b *testing.B) {
			st, err := state.NewStateStore()
			if err != nil {
				b.Fatal(err)
			}
			var nodes []*structs.Node
			for i := range 100 {
				n := &structs.Node{ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: fmt.Sprint("n", i),
					Datacenter: "dc1", NodePool: structs.DefaultNodePool,
					Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
					NodeResources: &structs.NodeResources{Cpu: structs.NodeCpuResources{CpuShares: 100_000},
						Memory: structs.NodeMemoryResources{MemoryMB: 100_000}}}
				if err := st.UpsertNode(uint64(i+1), n); err != nil {
					b.Fatal(err)
				}
				nodes = append(nodes, n)
			}
			run := time.Hour
			job := batchJob("timed", 50, allocs)
			job.TaskGroups[0].MaxRunDuration = &run
			if err := st.UpsertJob(200, job); err != nil {
				b.Fatal(err)
			}
			var as []*structs.Allocation
			for i := range allocs {
				as = append(as, &structs.Allocation{ID: structs.GenerateUUID(), Namespace: job.Namespace, JobID: job.ID,
					Job: job, TaskGroup: "g", Name: fmt.Sprintf("timed.g[%d]", i), NodeID: nodes[i%100].ID,
					Resources:     &structs.Resources{CPU: 100, MemoryMB: 64},
					DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
					CreateTime: time.Now().UnixNano()})
			}
			if err := st.UpsertAllocs(201, as); err != nil {
				b.Fatal(err)
			}
			snap, err := st.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c, _, err := ReadCluster(snap)
				if err != nil || len(c.Timed) != allocs {
					b.Fatalf("read %d timed allocs: %v", len(c.Timed), err)
				}
			}
		})
	}
}

// BenchmarkRunner_Publish is what a round spends handing its view over
// with 64 workloads released and placing (concurrent_placements 64 under
// load), a round after every change.
func BenchmarkRunner_Publish(b *testing.B) {
	r := &runner{q: New(Config{}), released: make(map[string]*tracked)}
	for i := range 64 {
		e := &structs.BatchQueueEntry{Namespace: "default", JobID: fmt.Sprintf("job-%d", i),
			Release: &structs.BatchQueueRelease{Index: uint64(i + 1), Time: int64(i + 1)}}
		r.released[key(e.Namespace, e.JobID)] = &tracked{entry: e, verdict: Verdict{Status: structs.BatchQueueStatusPlacing}}
	}
	b.ReportAllocs()
	for b.Loop() {
		r.publish()
	}
}
