package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// childJobs lists the children of parent with the given ID infix.
func childJobs(t *testing.T, c *api.Client, parent, infix string) []*api.JobListStub {
	t.Helper()
	jobs, _, err := c.Jobs().List(&api.QueryOptions{Prefix: parent + infix})
	must.NoError(t, err)
	var out []*api.JobListStub
	for _, j := range jobs {
		if j.ParentID == parent {
			out = append(out, j)
		}
	}
	return out
}

// watchQueueReleases records, for each job that enters the batch queue
// table, its release index (0 while queued), following the table with a
// memdb watch set; entries leave the table once placed. The returned
// function stops watching and returns what was seen.
func watchQueueReleases(a *Agent) func() map[string]uint64 {
	released := make(map[string]uint64)
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			st := a.server.State()
			ws := memdb.NewWatchSet()
			entries, err := st.BatchQueueEntries(ws)
			if err != nil {
				return
			}
			mu.Lock()
			for _, e := range entries {
				if released[e.JobID] == 0 {
					released[e.JobID] = e.ReleaseIndex()
				}
			}
			mu.Unlock()
			ws.Add(stop)
			ws.Add(st.AbandonCh())
			ws.Watch(nil)
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	return func() map[string]uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return released
	}
}

// Through a real agent: a periodic job every 2 s whose children would sleep
// 600 s keeps launching, because max_run_duration kills each child at 3 s,
// and prohibit_overlap keeps two children from ever running at once.
func TestPeriodic_OverlapAndMaxRunDuration(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: "fifo", ConcurrentPlacements: 1, WorkloadTimeout: time.Minute,
		}
	})
	c := apiClient(t, a)
	stopWatch := watchQueueReleases(a)

	job := maxRunJob("cron", "batch", 3*time.Second, "sleep 600")
	job.Periodic = &api.PeriodicConfig{Specs: []string{"*/2 * * * * * *"}, ProhibitOverlap: new(true)}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)

	// Each child runs ~3 s and the next starts at the following even
	// second, so three children take about 10 s.
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		if n := len(childJobs(t, c, "cron", structs.PeriodicLaunchSuffix)); n < 3 {
			return fmt.Errorf("%d children launched", n)
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))
	// Stop the parent so no new child starts while we look.
	_, _, err = c.Jobs().Deregister("cron", false, nil)
	must.NoError(t, err)

	type run struct {
		child               string
		created, start, end time.Time
		desc                string
	}
	var runs []run
	for _, child := range childJobs(t, c, "cron", structs.PeriodicLaunchSuffix) {
		allocs, _, err := c.Jobs().Allocations(child.ID, true, nil)
		must.NoError(t, err)
		must.GreaterEq(t, 1, len(allocs), must.Sprintf("child %s has %d allocs", child.ID, len(allocs)))
		for _, stub := range allocs {
			al, _, err := c.Allocations().Info(stub.ID, nil)
			must.NoError(t, err)
			ts := al.TaskStates["main"]
			if ts == nil || ts.StartedAt.IsZero() {
				continue
			}
			runs = append(runs, run{child: child.ID, created: time.Unix(0, al.CreateTime), start: ts.StartedAt, end: ts.FinishedAt, desc: al.ClientDescription})
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start.Before(runs[j].start) })
	must.GreaterEq(t, 2, len(runs), must.Sprintf("runs: %+v", runs))
	for i, r := range runs {
		if i+1 < len(runs) {
			// Every run but the last has ended, killed at its deadline,
			// before the next one started.
			must.False(t, r.end.IsZero(), must.Sprintf("run %s never ended but %s started", r.child, runs[i+1].child))
			must.False(t, runs[i+1].start.Before(r.end), must.Sprintf("%s started at %v before %s ended at %v", runs[i+1].child, runs[i+1].start, r.child, r.end))
			must.Eq(t, maxRunReason, r.desc)
			// The deadline counts from the alloc's CreateTime (setup under
			// load shortens the task's own run): never early, and a
			// generous ceiling for the kill.
			must.Between(t, 3*time.Second, r.end.Sub(r.created), 10*time.Second)
		}
	}

	// Periodic children are periodic-job evals: they bypass the queue.
	for id := range stopWatch() {
		must.StrNotContains(t, id, structs.PeriodicLaunchSuffix)
	}

	summary, _, err := c.Jobs().Summary("cron", nil)
	must.NoError(t, err)
	must.NotNil(t, summary.Children)
	// At most one child is not dead; at least two were killed.
	must.LessEq(t, 1, summary.Children.Pending+summary.Children.Running)
	must.GreaterEq(t, int64(2), summary.Children.Dead)
}

func TestPeriodic_Force(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	job := mockJob("yearly", 1)
	job.Periodic = &api.PeriodicConfig{Specs: []string{"0 0 1 1 *"}}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)

	evalID, _, err := c.Jobs().PeriodicForce("yearly", nil)
	must.NoError(t, err)
	must.NotEq(t, "", evalID)
	eval := waitEvalTerminal(t, c, evalID)
	must.Eq(t, "periodic-job", eval.TriggeredBy)
	must.StrHasPrefix(t, "yearly/periodic-", eval.JobID)
	child, _, err := c.Jobs().Info(eval.JobID, nil)
	must.NoError(t, err)
	must.Eq(t, "yearly", *child.ParentID)
	must.Nil(t, child.Periodic)

	// Forcing a job that is not periodic is a 400 naming the job.
	_, _, err = c.Jobs().Register(mockJob("plain", 1), nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().PeriodicForce("plain", nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, `non-periodic job "plain"`)
}

// paramJob is a parameterized job whose task succeeds only when the
// payload file holds "payload-<meta n>", so that a complete alloc proves
// the child saw its own payload and meta.
func paramJob(id string) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	job.ParameterizedJob = &api.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"n"}, MetaOptional: []string{"note"}}
	tg := api.NewTaskGroup("g", 1)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	task := shTask("main", `test "$(cat "$NOMAD_TASK_DIR/input.txt")" = "payload-$NOMAD_META_n"`)
	task.DispatchPayload = &api.DispatchPayloadConfig{File: "input.txt"}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func TestDispatch_ChildrenSeePayloadAndMeta(t *testing.T) {
	n := 20
	if os.Getenv("NOMADQ_E2E_LONG") == "1" {
		n = 200
	}
	const slots = 4
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: "fifo", ConcurrentPlacements: slots, WorkloadTimeout: time.Minute,
		}
	})
	c := apiClient(t, a)
	_, _, err := c.Jobs().Register(paramJob("work"), nil)
	must.NoError(t, err)

	stopWatch := watchQueueReleases(a)

	ids := make([]string, n)
	for i := range n {
		resp, _, err := c.Jobs().Dispatch("work", map[string]string{"n": fmt.Sprint(i)}, []byte(fmt.Sprintf("payload-%d", i)), "", nil)
		must.NoError(t, err)
		must.StrHasPrefix(t, "work/dispatch-", resp.DispatchedJobID)
		must.NotEq(t, "", resp.EvalID)
		ids[i] = resp.DispatchedJobID
	}

	// Every child runs exactly once and succeeds, which it only does with
	// its own payload and meta.
	createIdx := make([]uint64, n)
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		for i, id := range ids {
			if createIdx[i] != 0 {
				continue
			}
			allocs, _, err := c.Jobs().Allocations(id, true, nil)
			if err != nil {
				return err
			}
			if len(allocs) == 0 || allocs[0].ClientStatus == "pending" || allocs[0].ClientStatus == "running" {
				return fmt.Errorf("child %d (%s) not done", i, id)
			}
			createIdx[i] = allocs[0].CreateIndex
		}
		return nil
	}), wait.Timeout(time.Duration(n)*time.Second/2+20*time.Second), wait.Gap(200*time.Millisecond)))
	for i, id := range ids {
		allocs, _, err := c.Jobs().Allocations(id, true, nil)
		must.NoError(t, err)
		must.Len(t, 1, allocs, must.Sprintf("child %d", i))
		must.Eq(t, "complete", allocs[0].ClientStatus, must.Sprintf("child %d (%s): %s", i, id, allocs[0].ClientDescription))
	}

	// The queue released children in dispatch order with at most `slots`
	// placing at once: no child was placed after more than slots-1 of the
	// children dispatched after it.
	for j := range n {
		later := 0
		for i := range j {
			if createIdx[i] > createIdx[j] {
				later++
			}
		}
		must.LessEq(t, slots-1, later, must.Sprintf("child %d placed before %d earlier children", j, later))
	}

	summary, _, err := c.Jobs().Summary("work", nil)
	must.NoError(t, err)
	must.Eq(t, int64(n), summary.Children.Dead)

	// Dispatched children went through the queue and were released in
	// dispatch order.
	released := stopWatch()
	var order []uint64
	for _, id := range ids {
		if r := released[id]; r != 0 {
			order = append(order, r)
		}
	}
	t.Logf("saw %d of %d children in the queue, %d of them released", len(released), n, len(order))
	must.Positive(t, len(released), must.Sprint("no dispatched child was seen in the batch queue"))
	must.SliceNotEmpty(t, order)
	must.True(t, slices.IsSorted(order), must.Sprintf("release indexes in dispatch order: %v", order))
}

func TestDispatch_ValidationAndIdempotency(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	_, _, err := c.Jobs().Register(paramJob("work"), nil)
	must.NoError(t, err)
	forbidden := paramJob("nopayload")
	forbidden.ParameterizedJob.Payload = "forbidden"
	_, _, err = c.Jobs().Register(forbidden, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(mockJob("plain", 1), nil)
	must.NoError(t, err)

	put := func(path string, body any) (int, string) {
		buf, err := json.Marshal(body)
		must.NoError(t, err)
		req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+path, bytes.NewReader(buf))
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	cases := []struct {
		name, job string
		body      map[string]any
		code      int
		msg       string
	}{
		{"missing required meta", "work", map[string]any{"Payload": []byte("x")}, 400, "required meta keys: [n]"},
		{"unpermitted meta", "work", map[string]any{"Payload": []byte("x"), "Meta": map[string]string{"n": "1", "bogus": "2"}}, 400, "unpermitted meta keys: [bogus]"},
		{"missing required payload", "work", map[string]any{"Meta": map[string]string{"n": "1"}}, 400, "Payload is required"},
		{"payload forbidden", "nopayload", map[string]any{"Payload": []byte("x"), "Meta": map[string]string{"n": "1"}}, 400, "Payload is not allowed"},
		{"payload too large", "work", map[string]any{"Payload": bytes.Repeat([]byte("x"), 16*1024+1), "Meta": map[string]string{"n": "1"}}, 400, "Payload exceeds maximum size: 16385 bytes > 16384 bytes"},
		{"not parameterized", "plain", map[string]any{}, 400, `"plain" is not a parameterized job`},
		{"unknown job", "nope", map[string]any{}, 404, "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := put("/v1/job/"+tc.job+"/dispatch", tc.body)
			must.Eq(t, tc.code, code, must.Sprint(msg))
			must.StrContains(t, msg, tc.msg)
		})
	}

	// A job without required payload or meta dispatches without a body.
	optional := paramJob("bare")
	optional.ParameterizedJob = &api.ParameterizedJobConfig{}
	_, _, err = c.Jobs().Register(optional, nil)
	must.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+"/v1/job/bare/dispatch", nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, 200, resp.StatusCode)

	// Exactly 16 KiB is accepted.
	code, msg := put("/v1/job/work/dispatch", map[string]any{"Payload": bytes.Repeat([]byte("x"), 16*1024), "Meta": map[string]string{"n": "1"}})
	must.Eq(t, 200, code, must.Sprint(msg))

	// The same idempotency token returns the same child, in the body or
	// as the query parameter the official client sends.
	first, _, err := c.Jobs().Dispatch("work", map[string]string{"n": "7"}, []byte("payload-7"), "", &api.WriteOptions{IdempotencyToken: "tok-1"})
	must.NoError(t, err)
	again, _, err := c.Jobs().Dispatch("work", map[string]string{"n": "7"}, []byte("payload-7"), "", &api.WriteOptions{IdempotencyToken: "tok-1"})
	must.NoError(t, err)
	must.Eq(t, first.DispatchedJobID, again.DispatchedJobID)
	code, msg = put("/v1/job/work/dispatch", map[string]any{"Payload": []byte("payload-7"), "Meta": map[string]string{"n": "7"}, "IdempotencyToken": "tok-1"})
	must.Eq(t, 200, code)
	must.StrContains(t, msg, first.DispatchedJobID)
	other, _, err := c.Jobs().Dispatch("work", map[string]string{"n": "7"}, []byte("payload-7"), "", &api.WriteOptions{IdempotencyToken: "tok-2"})
	must.NoError(t, err)
	must.NotEq(t, first.DispatchedJobID, other.DispatchedJobID)
	must.True(t, strings.HasPrefix(other.DispatchedJobID, "work/dispatch-"))

	child, _, err := c.Jobs().Info(first.DispatchedJobID, nil)
	must.NoError(t, err)
	must.True(t, child.Dispatched)
	must.Eq(t, "work", *child.ParentID)
	must.Eq(t, "7", child.Meta["n"])
	must.Eq(t, "payload-7", string(child.Payload))
}
