package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/jobspec"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// The compatibility suite drives a real in-process dev agent only through
// the official Go client, github.com/hashicorp/nomad/api.

func apiClient(t *testing.T, a *Agent) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: a.HTTPAddr()})
	must.NoError(t, err)
	return c
}

func parseExample(t *testing.T, name string) *api.Job {
	t.Helper()
	path := filepath.Join("..", "examples", name)
	f, err := os.Open(path)
	must.NoError(t, err)
	defer f.Close()
	job, err := jobspec.Parse(path, f)
	must.NoError(t, err)
	return job
}

func mockJob(id string, count int) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", count)
	task := api.NewTask("t", "mock_driver")
	task.Config = map[string]any{"run_for": "1s"}
	task.Require(&api.Resources{CPU: new(100), MemoryMB: new(64)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

// waitEvalTerminal waits until the evaluation is complete, failed or
// canceled, polling as the CLI does.
func waitEvalTerminal(t *testing.T, c *api.Client, evalID string) *api.Evaluation {
	t.Helper()
	var eval *api.Evaluation
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		e, _, err := c.Evaluations().Info(evalID, nil)
		if err != nil {
			return err
		}
		eval = e
		if e.Status == "pending" || e.Status == "blocked" {
			return errPending
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
	return eval
}

type pendingError struct{}

func (pendingError) Error() string { return "eval still pending" }

var errPending = pendingError{}

func TestCompat_JobLifecycle(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	// Register the timeout example as the CLI would send it.
	job := parseExample(t, "timeout.nomad.hcl")
	resp, wm, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	must.NotEq(t, "", resp.EvalID)
	must.Positive(t, wm.LastIndex)
	must.Eq(t, resp.JobModifyIndex, wm.LastIndex)

	// The eval is readable immediately after the PUT returns.
	eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, "job-register", eval.TriggeredBy)

	eval = waitEvalTerminal(t, c, resp.EvalID)
	must.Eq(t, "complete", eval.Status)
	must.MapEmpty(t, eval.FailedTGAllocs)

	allocs, _, err := c.Evaluations().Allocations(resp.EvalID, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.Eq(t, "sleeper", allocs[0].TaskGroup)

	// Read back: every field the user wrote is stored as written, with
	// the server's defaults filled in.
	got, qm, err := c.Jobs().Info("timeout", nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.True(t, qm.KnownLeader)
	want := parseExample(t, "timeout.nomad.hcl")
	want.Canonicalize()
	must.Eq(t, *want.ID, *got.ID)
	must.Eq(t, *want.Type, *got.Type)
	must.Eq(t, want.Datacenters, got.Datacenters)
	must.Eq(t, *want.Priority, *got.Priority)
	must.Len(t, 1, got.TaskGroups)
	gtg, wtg := got.TaskGroups[0], want.TaskGroups[0]
	must.Eq(t, *wtg.Name, *gtg.Name)
	must.Eq(t, *wtg.Count, *gtg.Count)
	must.Eq(t, 3*time.Second, *gtg.MaxRunDuration)
	must.Eq(t, *wtg.RestartPolicy.Attempts, *gtg.RestartPolicy.Attempts)
	must.Eq(t, *wtg.RestartPolicy.Delay, *gtg.RestartPolicy.Delay)
	must.Eq(t, *wtg.RestartPolicy.Mode, *gtg.RestartPolicy.Mode)
	must.Eq(t, wtg.Tasks[0].Name, gtg.Tasks[0].Name)
	must.Eq(t, wtg.Tasks[0].Driver, gtg.Tasks[0].Driver)
	must.Eq(t, *wtg.Tasks[0].Resources.CPU, *gtg.Tasks[0].Resources.CPU)
	must.Eq(t, *wtg.Tasks[0].Resources.MemoryMB, *gtg.Tasks[0].Resources.MemoryMB)
	must.True(t, reflect.DeepEqual(wtg.Tasks[0].Config, gtg.Tasks[0].Config), must.Sprintf("config %v != %v", wtg.Tasks[0].Config, gtg.Tasks[0].Config))

	// List, summary and allocations.
	stubs, _, err := c.Jobs().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, stubs)
	must.NotNil(t, stubs[0].JobSummary)
	sum, _, err := c.Jobs().Summary("timeout", nil)
	must.NoError(t, err)
	must.MapContainsKey(t, sum.Summary, "sleeper")
	jallocs, _, err := c.Jobs().Allocations("timeout", true, nil)
	must.NoError(t, err)
	must.Len(t, 1, jallocs)
	full, _, err := c.Allocations().Info(jallocs[0].ID, nil)
	must.NoError(t, err)
	must.NotNil(t, full.Job)
	must.Eq(t, "timeout", *full.Job.ID)
	must.NotNil(t, full.Job.LookupTaskGroup("sleeper"))
	evals, _, err := c.Jobs().Evaluations("timeout", nil)
	must.NoError(t, err)
	must.Len(t, 1, evals)

	// A change makes a new version; versions come newest first with diffs.
	job.TaskGroups[0].MaxRunDuration = new(5 * time.Second)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	versions, diffs, _, err := c.Jobs().Versions("timeout", true, nil)
	must.NoError(t, err)
	must.Len(t, 2, versions)
	must.Eq(t, uint64(1), *versions[0].Version)
	must.Len(t, 1, diffs)
	must.Eq(t, "Edited", diffs[0].Type)

	// Plan a change: the diff shows max_run_duration and nothing is
	// written.
	// The client and the scheduler write alloc and job status updates at
	// any time, so "nothing" is judged on what a plan would add: a job
	// version or an evaluation.
	written := func() [2]uint64 {
		i, err := a.server.State().Index(state.TableJobVersion)
		must.NoError(t, err)
		evals, err := a.server.State().EvalsByJob(nil, structs.DefaultNamespace, "timeout")
		must.NoError(t, err)
		return [2]uint64{i, uint64(len(evals))}
	}
	idx0 := written()
	job.TaskGroups[0].MaxRunDuration = new(7 * time.Second)
	plan, _, err := c.Jobs().Plan(job, true, nil)
	must.NoError(t, err)
	must.NotNil(t, plan.Diff)
	must.Eq(t, "Edited", plan.Diff.Type)
	must.Len(t, 1, plan.Diff.TaskGroups)
	found := false
	for _, f := range plan.Diff.TaskGroups[0].Fields {
		if f.Name == "MaxRunDuration" {
			found = true
			must.Eq(t, "5000000000", f.Old)
			must.Eq(t, "7000000000", f.New)
		}
	}
	must.True(t, found, must.Sprintf("plan diff lacks MaxRunDuration: %+v", plan.Diff.TaskGroups[0]))
	must.NotNil(t, plan.Annotations)
	must.MapContainsKey(t, plan.Annotations.DesiredTGUpdates, "sleeper")
	must.Eq(t, idx0, written())

	// Force an evaluation.
	evalID, _, err := c.Jobs().ForceEvaluate("timeout", nil)
	must.NoError(t, err)
	must.NotEq(t, "", evalID)

	// Stop, then purge.
	stopEval, _, err := c.Jobs().Deregister("timeout", false, nil)
	must.NoError(t, err)
	must.NotEq(t, "", stopEval)
	got, _, err = c.Jobs().Info("timeout", nil)
	must.NoError(t, err)
	must.True(t, *got.Stop)
	_, _, err = c.Jobs().Deregister("timeout", true, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Info("timeout", nil)
	must.ErrorContains(t, err, "404")
	must.ErrorContains(t, err, "job not found")
}

func TestCompat_NodesAgentAndStatus(t *testing.T) {
	a := NewTestAgent(t, nil)
	nodeID := a.Client().NodeID()
	c := apiClient(t, a)

	nodes, qm, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.Len(t, 1, nodes)
	must.Eq(t, nodeID, nodes[0].ID)
	must.Eq(t, "127.0.0.1", nodes[0].Address)
	must.Eq(t, "ready", nodes[0].Status)

	n, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.Eq(t, a.config.Name, n.Name)
	must.NotNil(t, n.NodeResources)
	_, _, err = c.Nodes().Info("00000000-0000-0000-0000-000000000000", nil)
	must.ErrorContains(t, err, "node not found")

	nallocs, _, err := c.Nodes().Allocations(nodeID, nil)
	must.NoError(t, err)
	must.Len(t, 0, nallocs)

	self, err := c.Agent().Self()
	must.NoError(t, err)
	must.Eq(t, "true", self.Stats["nomad"]["server"])
	must.Eq(t, "true", self.Stats["nomad"]["leader"])
	must.Eq(t, a.config.Name+".global", self.Member.Name)
	name, err := c.Agent().NodeName()
	must.NoError(t, err)
	must.Eq(t, a.config.Name+".global", name)
	dc, err := c.Agent().Datacenter()
	must.NoError(t, err)
	must.Eq(t, "dc1", dc)

	members, err := c.Agent().Members()
	must.NoError(t, err)
	must.Len(t, 1, members.Members)
	must.Eq(t, "alive", members.Members[0].Status)
	must.Eq(t, "nomad", members.Members[0].Tags["role"])

	health, err := c.Agent().Health()
	must.NoError(t, err)
	must.True(t, health.Server.Ok)

	leader, err := c.Status().Leader()
	must.NoError(t, err)
	must.Eq(t, a.RPCAddr(), leader)
	peers, err := c.Status().Peers()
	must.NoError(t, err)
	must.Eq(t, []string{a.RPCAddr()}, peers)
	regions, err := c.Regions().List()
	must.NoError(t, err)
	must.Eq(t, []string{"global"}, regions)

	metrics, err := c.Operator().Metrics(nil)
	must.NoError(t, err)
	must.StrContains(t, string(metrics), "Timestamp")
}

func TestCompat_SchedulerConfigKeepsBatchQueue(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue.Enabled = true
		c.Server.DefaultSchedulerConfig.BatchQueue.Order = "priority"
	})
	c := apiClient(t, a)

	cfg, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	must.Eq(t, api.SchedulerAlgorithmBinpack, cfg.SchedulerConfig.SchedulerAlgorithm)

	// The official client knows no BatchQueue: its write must keep ours.
	cfg.SchedulerConfig.SchedulerAlgorithm = api.SchedulerAlgorithmSpread
	cfg.SchedulerConfig.NodeLimitForFeasibilityChecks = 123
	upd, _, err := c.Operator().SchedulerSetConfiguration(cfg.SchedulerConfig, nil)
	must.NoError(t, err)
	must.True(t, upd.Updated)
	stored, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	must.Eq(t, uint(123), stored.SchedulerConfig.NodeLimitForFeasibilityChecks)

	var raw struct {
		SchedulerConfig struct {
			SchedulerAlgorithm string
			BatchQueue         struct {
				Enabled              bool
				Order                string
				ConcurrentPlacements int
				WorkloadTimeout      int64
				Backfill             bool
			}
		}
	}
	_, err = c.Raw().Query("/v1/operator/scheduler/configuration", &raw, nil)
	must.NoError(t, err)
	must.Eq(t, "spread", raw.SchedulerConfig.SchedulerAlgorithm)
	must.True(t, raw.SchedulerConfig.BatchQueue.Enabled)
	must.Eq(t, "priority", raw.SchedulerConfig.BatchQueue.Order)
	must.Eq(t, 1, raw.SchedulerConfig.BatchQueue.ConcurrentPlacements)
	must.Eq(t, int64(5*time.Minute), raw.SchedulerConfig.BatchQueue.WorkloadTimeout)

	// A body with BatchQueue sets it; absent fields inside take defaults.
	body := map[string]any{"SchedulerAlgorithm": "binpack", "BatchQueue": map[string]any{"Enabled": true, "ConcurrentPlacements": 4}}
	_, err = c.Raw().Write("/v1/operator/scheduler/configuration", body, nil, nil)
	must.NoError(t, err)
	_, err = c.Raw().Query("/v1/operator/scheduler/configuration", &raw, nil)
	must.NoError(t, err)
	must.Eq(t, "fifo", raw.SchedulerConfig.BatchQueue.Order)
	must.Eq(t, 4, raw.SchedulerConfig.BatchQueue.ConcurrentPlacements)
	must.False(t, raw.SchedulerConfig.BatchQueue.Backfill) // fifo's default

	// The fair order turns backfill on unless the body says otherwise.
	for _, tc := range []struct {
		body map[string]any
		want bool
	}{
		{map[string]any{"Enabled": true, "Order": "fair"}, true},
		{map[string]any{"Enabled": true, "Order": "fair", "Backfill": false}, false},
		{map[string]any{"Enabled": true, "Order": "fifo", "Backfill": true}, true},
	} {
		_, err = c.Raw().Write("/v1/operator/scheduler/configuration", map[string]any{"BatchQueue": tc.body}, nil, nil)
		must.NoError(t, err)
		_, err = c.Raw().Query("/v1/operator/scheduler/configuration", &raw, nil)
		must.NoError(t, err)
		must.Eq(t, tc.body["Order"].(string), raw.SchedulerConfig.BatchQueue.Order)
		must.Eq(t, tc.want, raw.SchedulerConfig.BatchQueue.Backfill, must.Sprintf("body %v", tc.body))
	}
}

func TestCompat_SearchAndBlockingQueries(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	_, _, err := c.Jobs().Register(mockJob("search-me", 1), nil)
	must.NoError(t, err)
	res, _, err := c.Search().PrefixSearch("search", contexts.All, nil)
	must.NoError(t, err)
	must.Eq(t, []string{"search-me"}, res.Matches[contexts.Jobs])
	must.False(t, res.Truncations[contexts.Jobs])

	// Let search-me finish, so the only change left is the next register.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		j, _, err := c.Jobs().Info("search-me", nil)
		return err == nil && *j.Status == "dead"
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	// A blocking list query wakes when a job is registered.
	_, qm, err := c.Jobs().List(nil)
	must.NoError(t, err)
	type result struct {
		stubs []*api.JobListStub
		qm    *api.QueryMeta
		err   error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		stubs, qm2, err := c.Jobs().List(&api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 20 * time.Second})
		done <- result{stubs, qm2, err}
	}()
	time.Sleep(100 * time.Millisecond)
	_, _, err = c.Jobs().Register(mockJob("wake-up", 1), nil)
	must.NoError(t, err)
	select {
	case r := <-done:
		must.NoError(t, r.err)
		must.Greater(t, qm.LastIndex, r.qm.LastIndex)
		ids := []string{}
		for _, s := range r.stubs {
			ids = append(ids, s.ID)
		}
		must.SliceContains(t, ids, "wake-up")
		must.Less(t, 10*time.Second, time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatal("blocking query did not wake on change")
	}

	// A blocking query that sees no change returns at the wait time with
	// the same index. search-me is dead, so nothing changes it.
	_, before, err := c.Jobs().Info("search-me", nil)
	must.NoError(t, err)
	const blockFor = 500 * time.Millisecond
	startBlock := time.Now()
	_, qm3, err := c.Jobs().Info("search-me", &api.QueryOptions{WaitIndex: before.LastIndex, WaitTime: blockFor})
	must.NoError(t, err)
	must.Eq(t, before.LastIndex, qm3.LastIndex)
	// A generous floor only: the server may add jitter and the machine may
	// be slow, but an answer well before the wait did not block.
	must.GreaterEq(t, blockFor*3/4, time.Since(startBlock))

	// Pagination.
	page, qmp, err := c.Jobs().List(&api.QueryOptions{PerPage: 1})
	must.NoError(t, err)
	must.Len(t, 1, page)
	must.Eq(t, "search-me", page[0].ID)
	must.Eq(t, "wake-up", qmp.NextToken)
	page, _, err = c.Jobs().List(&api.QueryOptions{PerPage: 1, NextToken: qmp.NextToken})
	must.NoError(t, err)
	must.Eq(t, "wake-up", page[0].ID)

	// Filter subset.
	filtered, _, err := c.Jobs().List(&api.QueryOptions{Filter: `ID == "wake-up"`})
	must.NoError(t, err)
	must.Len(t, 1, filtered)
	_, _, err = c.Jobs().List(&api.QueryOptions{Filter: `ID ==`})
	must.ErrorContains(t, err, "400")

	// Parse and validate endpoints.
	hcl, err := os.ReadFile("../examples/hello.nomad.hcl")
	must.NoError(t, err)
	parsed, err := c.Jobs().ParseHCL(string(hcl), true)
	must.NoError(t, err)
	must.Eq(t, "hello", *parsed.ID)
	_, err = c.Jobs().ParseHCL("job {", false)
	must.ErrorContains(t, err, "Failed to parse job")
	bad := mockJob("bad", 1)
	bad.Type = new("nope")
	vr, _, err := c.Jobs().Validate(bad, nil)
	must.NoError(t, err)
	must.True(t, strings.Contains(vr.Error, "nope"), must.Sprint(vr.Error))
}
