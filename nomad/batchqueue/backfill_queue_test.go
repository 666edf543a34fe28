package batchqueue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// node writes a ready, eligible node of 1000 MHz and 1000 MB.
func (h *harness) node() *structs.Node {
	n := &structs.Node{ID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Name: "n1", Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		NodeResources: &structs.NodeResources{Cpu: structs.NodeCpuResources{CpuShares: 1000},
			Memory: structs.NodeMemoryResources{MemoryMB: 1000}, Disk: structs.NodeDiskResources{DiskMB: 10_000}}}
	h.write(func(i uint64) error { return h.st.UpsertNode(i, n) })
	return n
}

// sized is a one-alloc batch job of ns asking for mb of memory, with a
// max_run_duration when run > 0.
func sized(ns, id string, mb int, run time.Duration) *structs.Job {
	j := batchJob(id, 50, 1)
	j.Namespace = ns
	j.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 10, MemoryMB: mb}
	if run > 0 {
		j.TaskGroups[0].MaxRunDuration = &run
	}
	return j
}

// running writes a job that bypassed the queue with one live alloc on
// node, created now.
func (h *harness) running(n *structs.Node, job *structs.Job) *structs.Allocation {
	h.write(func(i uint64) error { return h.st.UpsertJob(i, job) })
	a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: job.Namespace, JobID: job.ID, Job: job,
		TaskGroup: "g", Name: job.ID + ".g[0]", NodeID: n.ID,
		Resources:     &structs.Resources{CPU: 10, MemoryMB: job.TaskGroups[0].Tasks[0].Resources.MemoryMB},
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		CreateTime: time.Now().UnixNano()}
	h.write(func(i uint64) error { return h.st.UpsertAllocs(i, []*structs.Allocation{a}) })
	return a
}

func (h *harness) entryOf(id string) *structs.BatchQueueListEntry {
	synctest.Wait()
	for _, e := range h.q.List() {
		if e.JobID == id {
			return e
		}
	}
	return nil
}

// The shell end to end in fake time: a released head that the scheduler
// could not place reserves the start at which a running alloc's
// max_run_duration ends; a timed job that ends before it and one that
// fits beside it are released, an untimed one waits, shows why and when,
// and goes once the head is placed.
func TestQueue_BackfillBehindAReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bq := cfg(structs.BatchQueueOrderPriority, 3, time.Hour)
		bq.Backfill = true
		h := newHarness(t, bq)
		defer h.stop()
		n := h.node()
		filler := h.running(n, sized(structs.DefaultNamespace, "filler", 600, 5*time.Minute))
		shadow := filler.CreateTime + int64(5*time.Minute)

		h.register(sized(structs.DefaultNamespace, "big", 800, 0))
		must.Eq(t, []string{"big"}, h.releasedJobs())
		// The scheduler finds no room: exhausted, not infeasible.
		h.evalDone("big", map[string]*structs.AllocMetric{"g": {NodesExhausted: 1}})

		h.register(sized(structs.DefaultNamespace, "untimed", 100, 0))
		h.register(sized(structs.DefaultNamespace, "short", 300, time.Minute))
		// late outlives the shadow time but fits in the room big leaves;
		// short, released and not placed yet, counts as using its 300.
		h.register(sized(structs.DefaultNamespace, "late", 100, time.Hour))
		must.Eq(t, []string{"big", "short", "late"}, h.releasedJobs())

		big := h.entryOf("big")
		must.Eq(t, ReasonResources, big.Reason)
		must.StrHasPrefix(t, "waiting for capacity", big.ReasonDetail)
		must.Eq(t, shadow, big.EstimatedStart)
		untimed := h.entryOf("untimed")
		must.Eq(t, structs.BatchQueueStatusQueued, untimed.Status)
		must.Eq(t, ReasonResources, untimed.Reason)
		must.Eq(t, `waiting for capacity that job "big", ahead of it, has reserved`, untimed.ReasonDetail)
		// At the filler's deadline big gets its 800 MB (short ended, late
		// holds 100) and untimed the last 100 beside it.
		must.Eq(t, shadow, untimed.EstimatedStart)
		// One job's lookup answers what the listing says.
		must.Eq(t, untimed, h.q.Lookup(structs.DefaultNamespace, "untimed"))

		// The filler reaches its deadline and ends; the head is placed.
		time.Sleep(5 * time.Minute)
		done := filler.Copy()
		done.ClientStatus = structs.AllocClientStatusComplete
		h.write(func(i uint64) error { return h.st.UpdateAllocsFromClient(i, []*structs.Allocation{done}) })
		must.Eq(t, []string{"big", "short", "late"}, h.releasedJobs())
		h.place("big", 0, 1)
		must.Eq(t, []string{"big", "short", "late", "untimed"}, h.releasedJobs())
		must.Nil(t, h.entryOf("big"))
	})
}

// placeOn writes the scheduler's placement of a one-alloc job of ns on
// node: a running alloc holding the job's memory.
func (h *harness) placeOn(n *structs.Node, ns, id string) {
	job, err := h.st.JobByID(nil, ns, id)
	must.NoError(h.t, err)
	a := &structs.Allocation{ID: structs.GenerateUUID(), Namespace: ns, JobID: id, Job: job, TaskGroup: "g",
		Name: id + ".g[0]", NodeID: n.ID,
		Resources:     &structs.Resources{CPU: 10, MemoryMB: job.TaskGroups[0].Tasks[0].Resources.MemoryMB},
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		CreateTime: time.Now().UnixNano()}
	h.write(func(i uint64) error { return h.st.UpsertAllocs(i, []*structs.Allocation{a}) })
}

// Fair order through the shell: each release goes to the namespace whose
// running allocs hold the smaller share, so a flood from one namespace
// does not hold back a later one, and within a namespace the higher
// priority goes first.
func TestQueue_FairOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFair, 1, time.Hour))
		defer h.stop()
		h.write(func(i uint64) error {
			return h.st.UpsertNamespaces(i, []*structs.Namespace{{Name: "a"}, {Name: "b"}})
		})
		n := h.node()
		h.register(sized("a", "a0", 100, 0))
		must.Eq(t, []string{"a0"}, h.releasedJobs())
		for _, id := range []string{"a1", "a2", "a3"} {
			h.register(sized("a", id, 100, 0))
		}
		for _, j := range []struct {
			id   string
			prio int
		}{{"b1", 50}, {"b2", 20}, {"b3", 90}} {
			job := sized("b", j.id, 100, 0)
			job.Priority = j.prio
			h.register(job)
		}
		// The listing projects the same policy over the whole line.
		var listed []string
		for _, e := range h.q.List() {
			if e.Status == structs.BatchQueueStatusQueued {
				listed = append(listed, e.JobID)
			}
		}
		must.Eq(t, []string{"b3", "a1", "a2", "b1", "a3", "b2"}, listed)

		nsOf := map[string]string{"a0": "a", "a1": "a", "a2": "a", "a3": "a", "b1": "b", "b2": "b", "b3": "b"}
		for range 6 {
			rel := h.releasedJobs()
			last := rel[len(rel)-1]
			h.placeOn(n, nsOf[last], last)
		}
		must.Eq(t, []string{"a0", "b3", "a1", "b1", "a2", "b2", "a3"}, h.releasedJobs())
	})
}

// control applies an operator's control as the FSM would.
func (h *harness) control(ns, id, op string) error {
	var err error
	h.mu.Lock()
	h.index++
	err = h.st.BatchQueueControl(h.index, &structs.BatchQueueControlRequest{JobID: id, Op: op,
		WriteRequest: structs.WriteRequest{Namespace: ns}})
	h.mu.Unlock()
	return err
}

func (h *harness) queuedOrder() []string {
	synctest.Wait()
	var out []string
	for _, e := range h.q.List() {
		if e.Status == structs.BatchQueueStatusQueued {
			out = append(out, e.JobID)
		}
	}
	return out
}

// Operators hold, release and top queued jobs through Raft: a held job
// keeps its place and is skipped, a released one goes from that place,
// a topped one goes before the rest of its namespace, not before other
// namespaces' entries.
func TestQueue_HoldReleaseTop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour))
		defer h.stop()
		h.write(func(i uint64) error { return h.st.UpsertNamespaces(i, []*structs.Namespace{{Name: "x"}}) })
		h.registerAll("a", "b", "c")
		h.register(sized("x", "x1", 64, 0))
		h.registerAll("d", "e")
		must.Eq(t, []string{"a"}, h.releasedJobs())

		must.NoError(t, h.control(structs.DefaultNamespace, "b", structs.BatchQueueHold))
		must.NoError(t, h.control(structs.DefaultNamespace, "e", structs.BatchQueueTop))
		must.Eq(t, []string{"e", "b", "c", "x1", "d"}, h.queuedOrder())
		must.Eq(t, ReasonHeld, h.entryOf("b").Reason)
		must.Eq(t, int64(0), h.entryOf("b").EstimatedStart)
		must.Eq(t, h.entryOf("e"), h.q.Lookup(structs.DefaultNamespace, "e"))

		// a placed: b is held, e was topped.
		h.place("a", 0, 1)
		must.Eq(t, []string{"a", "e"}, h.releasedJobs())
		h.place("e", 0, 1)
		must.Eq(t, []string{"a", "e", "c"}, h.releasedJobs())

		// Released, b goes from the place it kept: before x1 and d.
		must.NoError(t, h.control(structs.DefaultNamespace, "b", structs.BatchQueueUnhold))
		h.place("c", 0, 1)
		must.Eq(t, []string{"a", "e", "c", "b"}, h.releasedJobs())

		// A job that is not waiting cannot be controlled.
		must.ErrorContains(t, h.control(structs.DefaultNamespace, "b", structs.BatchQueueHold), `job "b" in namespace "default" is not waiting in the batch queue`)
		must.ErrorContains(t, h.control(structs.DefaultNamespace, "d", "pause"), `batch queue control "pause" is not allowed`)
	})
}

// In the fair order a top moves a job ahead within its namespace only;
// the namespaces' shares still decide between them.
func TestQueue_FairTop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, cfg(structs.BatchQueueOrderFair, 1, time.Hour))
		defer h.stop()
		h.write(func(i uint64) error {
			return h.st.UpsertNamespaces(i, []*structs.Namespace{{Name: "a"}, {Name: "b"}})
		})
		n := h.node()
		for _, id := range []string{"a0", "a1", "a2"} {
			h.register(sized("a", id, 100, 0))
		}
		h.register(sized("b", "b1", 100, 0))
		must.Eq(t, []string{"a0"}, h.releasedJobs())
		must.NoError(t, h.control("a", "a2", structs.BatchQueueTop))
		must.Eq(t, []string{"a2", "b1", "a1"}, h.queuedOrder())
		h.placeOn(n, "a", "a0")
		must.Eq(t, []string{"a0", "b1"}, h.releasedJobs())
		h.placeOn(n, "b", "b1")
		must.Eq(t, []string{"a0", "b1", "a2"}, h.releasedJobs())
	})
}

// A listing shows a hold as soon as it is in the store, before the
// leader's next round has read it: an operator who holds a job and lists
// the queue sees it held (read your writes). The queue here never runs a
// round; its view is the one a round published before the hold.
func TestQueue_ListingReadsHoldsFromStore(t *testing.T) {
	st, err := state.NewStateStore()
	must.NoError(t, err)
	st.SetBatchQueueRouter(Route)
	h := &harness{t: t, st: st, evals: make(map[string]string)}
	bq := cfg(structs.BatchQueueOrderFIFO, 1, time.Hour)
	h.setConfig(bq)
	bq.Canonicalize()
	h.registerAll("a", "b")
	q := New(Config{State: func() *state.StateStore { return st }, Commit: h})
	q.view = view{settings: bq, store: st}

	must.NoError(t, h.control(structs.DefaultNamespace, "a", structs.BatchQueueHold))
	must.NoError(t, h.control(structs.DefaultNamespace, "b", structs.BatchQueueTop))
	var order []string
	for _, e := range q.List() {
		order = append(order, e.JobID)
	}
	must.Eq(t, []string{"b", "a"}, order)
	must.Eq(t, ReasonHeld, q.Lookup(structs.DefaultNamespace, "a").Reason)

	must.NoError(t, h.control(structs.DefaultNamespace, "a", structs.BatchQueueUnhold))
	e := q.Lookup(structs.DefaultNamespace, "a")
	must.Eq(t, ReasonLine, e.Reason)
	must.Eq(t, "1 job ahead in the line", e.ReasonDetail)
}
