package agent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

func queueAgent(t *testing.T, order string, timeout time.Duration) (*Agent, *api.Client) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: order, ConcurrentPlacements: 1, WorkloadTimeout: timeout,
		}
	})
	return a, apiClient(t, a)
}

// rawJob is a single-alloc raw_exec batch job that sleeps for secs.
func rawJob(id string, prio int, secs string, memMB int) *api.Job {
	job := api.NewBatchJob(id, id, "global", prio)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	task := api.NewTask("t", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{secs}}
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(memMB)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func qRegister(t *testing.T, c *api.Client, job *api.Job) string {
	t.Helper()
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	return resp.EvalID
}

// allocOf waits for the job's first alloc and returns it.
func allocOf(t *testing.T, c *api.Client, id string, within time.Duration) *api.AllocationListStub {
	t.Helper()
	var got *api.AllocationListStub
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _, err := c.Jobs().Allocations(id, true, nil)
		if err != nil || len(allocs) == 0 {
			return false
		}
		got = allocs[0]
		return true
	}), wait.Timeout(within), wait.Gap(20*time.Millisecond)))
	return got
}

func queueJobs(t *testing.T, c *api.Client) []structs.BatchQueueListEntry {
	t.Helper()
	var out []structs.BatchQueueListEntry
	_, err := c.Raw().Query("/v1/queue/jobs", &out, nil)
	must.NoError(t, err)
	return out
}

func queueEntry(t *testing.T, c *api.Client, id string) *structs.BatchQueueListEntry {
	for _, e := range queueJobs(t, c) {
		if e.JobID == id {
			return &e
		}
	}
	return nil
}

// nodeMemory is the memory of the agent's only node.
func nodeMemory(t *testing.T, c *api.Client) int {
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	n, _, err := c.Nodes().Info(nodes[0].ID, nil)
	must.NoError(t, err)
	return int(n.NodeResources.Memory.MemoryMB)
}

func TestBatchQueue_FIFOStartOrder(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	ids := []string{"q1", "q2", "q3", "q4", "q5"}
	for _, id := range ids {
		qRegister(t, c, rawJob(id, 50, "1", 32))
	}
	type placed struct {
		id    string
		index uint64
	}
	var got []placed
	for _, id := range ids {
		a := allocOf(t, c, id, 10*time.Second)
		got = append(got, placed{id, a.CreateIndex})
	}
	slices.SortFunc(got, func(a, b placed) int { return int(a.index) - int(b.index) })
	var order []string
	for _, p := range got {
		order = append(order, p.id)
	}
	must.Eq(t, ids, order)
}

// gate holds the queue's single slot: a hog takes 60% of the node's
// memory, then the gate asks for 60% too and waits (placing) until the
// hog is stopped.
func gate(t *testing.T, c *api.Client) (release func()) {
	mem := nodeMemory(t, c) * 6 / 10
	qRegister(t, c, rawJob("hog", 50, "60", mem))
	allocOf(t, c, "hog", 10*time.Second)
	qRegister(t, c, rawJob("gate", 50, "1", mem))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		e := queueEntry(t, c, "gate")
		return e != nil && e.Status == structs.BatchQueueStatusPlacing
	}), wait.Timeout(5*time.Second), wait.Gap(20*time.Millisecond)))
	return func() {
		_, _, err := c.Jobs().Deregister("hog", false, nil)
		must.NoError(t, err)
	}
}

func TestBatchQueue_PriorityOrder(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderPriority, time.Minute)
	open := gate(t, c)
	qRegister(t, c, rawJob("low1", 20, "1", 32))
	qRegister(t, c, rawJob("low2", 20, "1", 32))
	qRegister(t, c, rawJob("high", 90, "1", 32))
	var queued []string
	for _, e := range queueJobs(t, c) {
		if e.Status == structs.BatchQueueStatusQueued {
			queued = append(queued, e.JobID)
			// One job's entry, as job run and job status read it.
			var one []structs.BatchQueueListEntry
			_, err := c.Raw().Query("/v1/queue/jobs", &one, &api.QueryOptions{Params: map[string]string{"job_id": e.JobID}})
			must.NoError(t, err)
			must.SliceLen(t, 1, one)
			// The estimate is taken as of the queue's latest round, and a
			// round (a client's status report starts one) may run between
			// the two reads: it moves, everything else is the same.
			got := one[0]
			must.Eq(t, e.EstimatedStart == 0, got.EstimatedStart == 0)
			must.Less(t, int64(time.Second), max(got.EstimatedStart-e.EstimatedStart, e.EstimatedStart-got.EstimatedStart))
			got.EstimatedStart = e.EstimatedStart
			must.Eq(t, e, got)
		}
	}
	must.Eq(t, []string{"high", "low1", "low2"}, queued)
	var none []structs.BatchQueueListEntry
	_, err := c.Raw().Query("/v1/queue/jobs", &none, &api.QueryOptions{Params: map[string]string{"job_id": "nope"}})
	must.NoError(t, err)
	must.SliceEmpty(t, none)
	open()
	h := allocOf(t, c, "high", 10*time.Second)
	l1 := allocOf(t, c, "low1", 10*time.Second)
	l2 := allocOf(t, c, "low2", 10*time.Second)
	must.Less(t, l1.CreateIndex, h.CreateIndex)
	must.Less(t, l2.CreateIndex, l1.CreateIndex)
}

func TestBatchQueue_ConstrainedDoesNotBlock(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Hour)
	bad := rawJob("nowhere", 50, "1", 32)
	bad.Constrain(api.NewConstraint("${attr.kernel.name}", "=", "plan9"))
	qRegister(t, c, bad)
	qRegister(t, c, rawJob("next", 50, "1", 32))
	next := allocOf(t, c, "next", 10*time.Second)

	e := queueEntry(t, c, "nowhere")
	must.NotNil(t, e)
	must.Eq(t, structs.BatchQueueStatusConstrained, e.Status)
	must.NotEq(t, "", e.Reason)
	// Event order: the scheduler's verdict on the constrained job came
	// before the next job's placement.
	evals, _, err := c.Jobs().Evaluations("nowhere", nil)
	must.NoError(t, err)
	var verdict uint64
	for _, ev := range evals {
		if len(ev.FailedTGAllocs) > 0 && (verdict == 0 || ev.ModifyIndex < verdict) {
			verdict = ev.ModifyIndex
		}
	}
	must.Positive(t, verdict)
	must.Less(t, next.CreateIndex, verdict)
}

func TestBatchQueue_StalledThenPlaced(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderFIFO, 2*time.Second)
	mem := nodeMemory(t, c) * 6 / 10
	qRegister(t, c, rawJob("hog", 50, "60", mem))
	allocOf(t, c, "hog", 10*time.Second)
	qRegister(t, c, rawJob("big", 50, "1", mem))
	qRegister(t, c, rawJob("small", 50, "1", 32))
	// small waits behind big until big stalls.
	allocOf(t, c, "small", 10*time.Second)
	e := queueEntry(t, c, "big")
	must.NotNil(t, e)
	must.Eq(t, structs.BatchQueueStatusStalled, e.Status)
	_, _, err := c.Jobs().Deregister("hog", false, nil)
	must.NoError(t, err)
	allocOf(t, c, "big", 10*time.Second)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return queueEntry(t, c, "big") == nil
	}), wait.Timeout(5*time.Second), wait.Gap(20*time.Millisecond)))
}

func TestBatchQueue_LiveJobUpdateBypassesQueue(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Hour)
	job := rawJob("long", 50, "30", 32)
	job.TaskGroups[0].MaxRunDuration = new(time.Minute)
	qRegister(t, c, job)
	first := allocOf(t, c, "long", 10*time.Second)
	// Fill the queue's slot with a job that cannot be placed yet.
	mem := nodeMemory(t, c)
	qRegister(t, c, rawJob("toobig", 50, "1", mem))
	// Raise max_run_duration of the running job: evaluated at once.
	job.TaskGroups[0].MaxRunDuration = new(2 * time.Minute)
	evalID := qRegister(t, c, job)
	ev := waitEvalTerminal(t, c, evalID)
	must.Eq(t, "complete", ev.Status)
	must.Nil(t, queueEntry(t, c, "long"))
	allocs, _, err := c.Jobs().Allocations("long", false, nil)
	must.NoError(t, err)
	must.Eq(t, first.ID, allocs[0].ID)

}

// A client paging through the listing while the queue moves does not
// skip an entry: the page token names a place in the line, not a rank.
func TestBatchQueue_PagesKeepTheirPlace(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	gate(t, c)
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5"} {
		qRegister(t, c, rawJob(id, 50, "1", 32))
	}
	page := func(token string) ([]string, string) {
		var out []structs.BatchQueueListEntry
		qm, err := c.Raw().Query("/v1/queue/jobs", &out, &api.QueryOptions{PerPage: 2, NextToken: token})
		must.NoError(t, err)
		var ids []string
		for _, e := range out {
			ids = append(ids, e.JobID)
		}
		return ids, qm.NextToken
	}
	first, token := page("")
	must.Eq(t, []string{"p1", "p2"}, first)
	must.NotEq(t, "", token)

	_, _, err := c.Jobs().Deregister("p1", false, nil) // the line moves up
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return queueEntry(t, c, "p1") == nil }),
		wait.Timeout(5*time.Second), wait.Gap(20*time.Millisecond)))
	second, token := page(token)
	must.Eq(t, []string{"p3", "p4"}, second)
	third, token := page(token)
	must.Eq(t, []string{"p5", "gate"}, third)
	must.Eq(t, "", token)
}

// The queue's series are new, so they follow Prometheus naming: counters
// end in _total and durations are seconds. Each is listed on the metrics
// page with its type.
func TestBatchQueue_PrometheusNames(t *testing.T) {
	a, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	qRegister(t, c, rawJob("m1", 50, "1", 32))
	allocOf(t, c, "m1", 10*time.Second)
	// The leader counts the placement once its Raft commit returns, a
	// moment after the entry leaves the listing: wait for the counter.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return queueEntry(t, c, "m1") == nil && scrape(t, a)["nomad_nomad_batch_queue_placed_total"] == "1"
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
	must.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must.NoError(t, err)
	types := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "website", "metrics.md"))
	must.NoError(t, err)
	want := map[string]string{
		"nomad_nomad_batch_queue_depth":                   "gauge",
		"nomad_nomad_batch_queue_enqueued_total":          "counter",
		"nomad_nomad_batch_queue_released_total":          "counter",
		"nomad_nomad_batch_queue_placed_total":            "counter",
		"nomad_nomad_batch_queue_wait_time_seconds":       "summary",
		"nomad_nomad_batch_queue_placement_time_seconds":  "summary",
		"nomad_nomad_batch_queue_reservation_age_seconds": "gauge",
	}
	// Series by namespace exist only while a namespace queues or runs.
	optional := map[string]string{
		"nomad_nomad_batch_queue_share":  "gauge",
		"nomad_nomad_batch_queue_queued": "gauge",
		// The multifactor order's gauges, declared up front (at 0 until a
		// multifactor round sets them).
		"nomad_nomad_batch_queue_effective_priority_p50": "gauge",
		"nomad_nomad_batch_queue_effective_priority_p90": "gauge",
		"nomad_nomad_batch_queue_effective_priority_max": "gauge",
		"nomad_nomad_batch_queue_usage":                  "gauge",
		"nomad_nomad_batch_queue_fair_share_factor":      "gauge",
	}
	for name, typ := range want {
		must.Eq(t, typ, types[name], must.Sprintf("%s in the scrape", name))
		must.StrContains(t, string(page), "| `"+name+"` | "+typ+" |")
	}
	for name, typ := range optional {
		if got, ok := types[name]; ok {
			must.Eq(t, typ, got, must.Sprintf("%s in the scrape", name))
		}
		must.StrContains(t, string(page), "| `"+name+"` | "+typ+" |")
	}
	for name := range types {
		if strings.Contains(name, "batch_queue") {
			_, ok := want[name]
			if _, opt := optional[name]; opt {
				ok = true
			}
			must.True(t, ok || strings.HasSuffix(name, "_total"), must.Sprintf("unexpected queue series %s", name))
		}
	}
	s := scrape(t, a)
	must.Eq(t, "1", s["nomad_nomad_batch_queue_placed_total"])
	must.Eq(t, "0", s[`nomad_nomad_batch_queue_depth{status="queued"}`])
}
