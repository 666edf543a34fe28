package agent

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

const maxRunReason = "allocation exceeded max_run_duration"

// maxRunJob is a job of one group "g" with a raw_exec task "main"
// running /bin/sh -c script, limited to limit.
func maxRunJob(id, typ string, limit time.Duration, script string) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Type = new(typ)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.MaxRunDuration = &limit
	if typ == "batch" {
		tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	}
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(3), Delay: new(time.Second), Interval: new(time.Hour), Mode: new("fail")}
	tg.AddTask(shTask("main", script))
	job.AddTaskGroup(tg)
	return job
}

func shTask(name, script string) *api.Task {
	task := api.NewTask(name, "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
	task.KillTimeout = new(2 * time.Second)
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(16)})
	return task
}

func register(t *testing.T, c *api.Client, job *api.Job) {
	t.Helper()
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	waitEvalTerminal(t, c, resp.EvalID)
}

// jobAllocs waits until the job has n allocs matching ok and returns all
// of its allocs.
func jobAllocs(t *testing.T, c *api.Client, jobID string, n int, timeout time.Duration, ok func(*api.AllocationListStub) bool) []*api.AllocationListStub {
	t.Helper()
	var allocs []*api.AllocationListStub
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		var err error
		allocs, _, err = c.Jobs().Allocations(jobID, true, nil)
		if err != nil {
			return err
		}
		got := 0
		for _, a := range allocs {
			if ok(a) {
				got++
			}
		}
		if got < n {
			return fmt.Errorf("%d of %d allocs ready: %v", got, n, maxRunSummary(allocs))
		}
		return nil
	}), wait.Timeout(timeout), wait.Gap(50*time.Millisecond)))
	return allocs
}

func maxRunSummary(allocs []*api.AllocationListStub) []string {
	var out []string
	for _, a := range allocs {
		out = append(out, a.ID[:8]+":"+a.ClientStatus+":"+a.ClientDescription)
	}
	return out
}

func isTerminal(a *api.AllocationListStub) bool {
	return a.ClientStatus == "complete" || a.ClientStatus == "failed" || a.ClientStatus == "lost"
}

func isRunning(a *api.AllocationListStub) bool { return a.ClientStatus == "running" }

// The four acceptance scenarios, through a real agent and real raw_exec
// processes, plus the Prometheus gauges, in parallel on one agent.
func TestMaxRunDuration_EndToEnd(t *testing.T) {
	a := NewTestAgent(t, func(cfg *config.Config) {
		cfg.Telemetry.PublishAllocationMetrics = true
		cfg.Telemetry.CollectionIntervalDur = 100 * time.Millisecond
	})
	c := apiClient(t, a)

	t.Run("batch times out", func(t *testing.T) {
		t.Parallel()
		register(t, c, maxRunJob("mrd-basic", "batch", 3*time.Second, "exec sleep 600"))
		allocs := jobAllocs(t, c, "mrd-basic", 1, 20*time.Second, isTerminal)
		must.SliceLen(t, 1, allocs)
		must.Eq(t, "complete", allocs[0].ClientStatus)
		must.Eq(t, maxRunReason, allocs[0].ClientDescription)
		full, _, err := c.Allocations().Info(allocs[0].ID, nil)
		must.NoError(t, err)
		ts := full.TaskStates["main"]
		must.Eq(t, uint64(0), ts.Restarts)
		must.Eq(t, "dead", ts.State)
		var killing *api.TaskEvent
		for _, e := range ts.Events {
			if e.Type == "Killing" {
				killing = e
			}
		}
		must.NotNil(t, killing)
		must.Eq(t, maxRunReason, killing.DisplayMessage)
		// Never early: the kill comes at or after CreateTime + 3s.
		must.GreaterEq(t, full.CreateTime+int64(3*time.Second), killing.Time)
		// Not rescheduled, and the job is dead.
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
			job, _, err := c.Jobs().Info("mrd-basic", nil)
			if err != nil {
				return err
			}
			if *job.Status != "dead" {
				return fmt.Errorf("job status %s", *job.Status)
			}
			return nil
		}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
		allocs, _, err = c.Jobs().Allocations("mrd-basic", true, nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, allocs)
	})

	t.Run("batch completes first", func(t *testing.T) {
		t.Parallel()
		register(t, c, maxRunJob("mrd-completes", "batch", 30*time.Second, "echo done"))
		allocs := jobAllocs(t, c, "mrd-completes", 1, 20*time.Second, isTerminal)
		must.SliceLen(t, 1, allocs)
		must.Eq(t, "complete", allocs[0].ClientStatus)
		must.Eq(t, "All tasks have completed", allocs[0].ClientDescription)
	})

	t.Run("poststop never starts", func(t *testing.T) {
		t.Parallel()
		job := maxRunJob("mrd-poststop", "batch", 3*time.Second, "exec sleep 600")
		post := shTask("poststop", "sleep 10")
		post.Lifecycle = &api.TaskLifecycle{Hook: "poststop"}
		job.TaskGroups[0].AddTask(post)
		register(t, c, job)
		allocs := jobAllocs(t, c, "mrd-poststop", 1, 20*time.Second, isTerminal)
		must.Eq(t, "complete", allocs[0].ClientStatus)
		must.Eq(t, maxRunReason, allocs[0].ClientDescription)
		// Re-query: the terminal status is only sent once all tasks died.
		full, _, err := c.Allocations().Info(allocs[0].ID, nil)
		must.NoError(t, err)
		ps := full.TaskStates["poststop"]
		must.NotNil(t, ps)
		must.Eq(t, "dead", ps.State)
		must.True(t, ps.StartedAt.IsZero() || ps.StartedAt.Unix() <= 0, must.Sprintf("poststop started at %v", ps.StartedAt))
	})

	t.Run("sysbatch times out", func(t *testing.T) {
		t.Parallel()
		job := maxRunJob("mrd-sysbatch", "sysbatch", 3*time.Second, "exec sleep 600")
		job.TaskGroups[0].RestartPolicy.Attempts = new(0)
		register(t, c, job)
		allocs := jobAllocs(t, c, "mrd-sysbatch", 1, 20*time.Second, isTerminal)
		must.SliceNotEmpty(t, allocs)
		for _, al := range allocs {
			must.Eq(t, "complete", al.ClientStatus)
			must.Eq(t, maxRunReason, al.ClientDescription)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		t.Parallel()
		// Two allocs of one group: index 0 ends after 2 s, index 1 runs on.
		job := maxRunJob("mrd-metrics", "batch", time.Minute,
			`if [ "$NOMAD_ALLOC_INDEX" = 0 ]; then sleep 2; else exec sleep 600; fi`)
		job.TaskGroups[0].Count = new(2)
		register(t, c, job)
		allocs := jobAllocs(t, c, "mrd-metrics", 2, 20*time.Second, isRunning)
		ids := map[string]string{} // alloc ID -> name
		for _, al := range allocs {
			ids[al.ID] = al.Name
		}
		var done, live string
		for id, name := range ids {
			if strings.HasSuffix(name, "[0]") {
				done = id
			} else {
				live = id
			}
		}
		// Remaining time is read at scrape time: watch it go down.
		first := scrapeMaxRun(t, a)
		var second maxRunScrape
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			second = scrapeMaxRun(t, a)
			r, ok := second.remaining[live]
			return ok && r < first.remaining[live]
		}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
		for id := range ids {
			if _, ended := second.remaining[id]; !ended {
				continue // index 0 may already be gone
			}
			must.Eq(t, 60.0, first.configured[id])
			must.Less(t, first.remaining[id], second.remaining[id])
			must.Positive(t, second.remaining[id])
		}
		must.MapContainsKey(t, first.remaining, live)
		must.MapContainsKey(t, first.remaining, done)
		must.MapContainsKey(t, first.configured, done)
		// The JSON form's sink: the same gauges, refreshed every collection
		// interval.
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
			return jsonMaxRunGauge(a, live)
		}), wait.Timeout(5*time.Second), wait.Gap(100*time.Millisecond)))
		jobAllocs(t, c, "mrd-metrics", 1, 20*time.Second, isTerminal)
		after := scrapeMaxRun(t, a)
		must.MapNotContainsKey(t, after.remaining, done)
		must.MapNotContainsKey(t, after.configured, done)
		must.MapContainsKey(t, after.remaining, live)
		must.MapContainsKey(t, after.configured, live)
		_, _, err := c.Jobs().Deregister("mrd-metrics", false, nil)
		must.NoError(t, err)
	})
}

// allocRunsUntil watches the alloc with blocking queries until the clock
// passes until, failing as soon as it is seen not running: a kill that
// should not happen shows at once, and no sleep guesses when to look.
func allocRunsUntil(t *testing.T, c *api.Client, allocID string, until time.Time) {
	t.Helper()
	var index uint64
	for {
		left := time.Until(until)
		alloc, qm, err := c.Allocations().Info(allocID, &api.QueryOptions{WaitIndex: index, WaitTime: max(left, time.Millisecond)})
		must.NoError(t, err)
		must.Eq(t, "running", alloc.ClientStatus, must.Sprintf("alloc %s before %v", allocID, until))
		if left <= 0 {
			return
		}
		index = qm.LastIndex
	}
}

// jsonMaxRunGauge checks that the agent's in-memory sink, which
// /v1/metrics shows, has both gauges of an alloc with its labels.
func jsonMaxRunGauge(a *Agent, allocID string) error {
	found := map[string]bool{}
	for _, iv := range a.telemetry.inmem.Data() {
		iv.RLock()
		for _, g := range iv.Gauges {
			for _, suffix := range []string{"client.allocs.max_run_duration.configured_seconds", "client.allocs.max_run_duration.remaining_seconds"} {
				if !strings.HasSuffix(g.Name, suffix) || g.Value <= 0 {
					continue
				}
				for _, l := range g.Labels {
					if l.Name == "alloc_id" && l.Value == allocID {
						found[suffix] = true
					}
				}
			}
		}
		iv.RUnlock()
	}
	if len(found) != 2 {
		return fmt.Errorf("alloc %s: gauges found %v", allocID, found)
	}
	return nil
}

type maxRunScrape struct {
	configured, remaining map[string]float64 // by alloc_id
}

// scrapeMaxRun reads the max_run_duration gauges of
// /v1/metrics?format=prometheus by alloc ID, checking that each series
// carries the node and alloc labels.
func scrapeMaxRun(t *testing.T, a *Agent) maxRunScrape {
	t.Helper()
	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	out := maxRunScrape{configured: map[string]float64{}, remaining: map[string]float64{}}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		var into map[string]float64
		switch {
		case strings.HasPrefix(line, "nomad_client_allocs_max_run_duration_configured_seconds{"):
			into = out.configured
		case strings.HasPrefix(line, "nomad_client_allocs_max_run_duration_remaining_seconds{"):
			into = out.remaining
		default:
			continue
		}
		for _, l := range []string{"node_id=", "datacenter=", "node_class=", "node_pool=", "task_group=", "namespace=", "job=", "alloc_id="} {
			must.StrContains(t, line, l)
		}
		i := strings.Index(line, `alloc_id="`) + len(`alloc_id="`)
		id := line[i : i+36]
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		must.NoError(t, err)
		into[id] = v
	}
	must.NoError(t, sc.Err())
	return out
}

// Changing only max_run_duration of a running job updates its alloc in
// place: raised, the same alloc runs past the old deadline; lowered below
// the time already spent, the alloc is killed at once. With the batch
// queue on too: the update bypasses it since the job has a live alloc.
func TestMaxRunDuration_InPlaceUpdate(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch_queue=%v", queue), func(t *testing.T) {
			t.Parallel()
			a := NewTestAgent(t, func(cfg *config.Config) {
				cfg.Server.DefaultSchedulerConfig.BatchQueue.Enabled = queue
				cfg.Server.DefaultSchedulerConfig.BatchQueue.Canonicalize()
			})
			c := apiClient(t, a)
			job := maxRunJob("mrd-inplace", "batch", 5*time.Second, "exec sleep 600")
			register(t, c, job)
			allocs := jobAllocs(t, c, "mrd-inplace", 1, 20*time.Second, isRunning)
			orig := allocs[0]
			before, _, err := c.Allocations().Info(orig.ID, nil)
			must.NoError(t, err)
			startedAt := before.TaskStates["main"].StartedAt

			job.TaskGroups[0].MaxRunDuration = new(time.Minute)
			register(t, c, job)
			// Past the old deadline, and by a margin, it still runs.
			allocRunsUntil(t, c, orig.ID, time.Unix(0, orig.CreateTime).Add(6*time.Second))
			allocs, _, err = c.Jobs().Allocations("mrd-inplace", true, nil)
			must.NoError(t, err)
			must.SliceLen(t, 1, allocs, must.Sprint(maxRunSummary(allocs)))
			must.Eq(t, orig.ID, allocs[0].ID)
			must.Eq(t, "running", allocs[0].ClientStatus)
			after, _, err := c.Allocations().Info(orig.ID, nil)
			must.NoError(t, err)
			must.Eq(t, time.Minute, *after.Job.LookupTaskGroup("g").MaxRunDuration)
			must.Eq(t, uint64(0), after.TaskStates["main"].Restarts)
			must.Eq(t, startedAt, after.TaskStates["main"].StartedAt)

			// Lowered to a value already passed: killed at once.
			job.TaskGroups[0].MaxRunDuration = new(2 * time.Second)
			changed := time.Now()
			register(t, c, job)
			allocs = jobAllocs(t, c, "mrd-inplace", 1, 10*time.Second, isTerminal)
			must.SliceLen(t, 1, allocs)
			must.Eq(t, orig.ID, allocs[0].ID)
			must.Eq(t, "complete", allocs[0].ClientStatus)
			must.Eq(t, maxRunReason, allocs[0].ClientDescription)
			must.Less(t, 5*time.Second, time.Since(changed))
		})
	}
}
