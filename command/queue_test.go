package command

import (
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

func sleepJob(id string, memMB int) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	task := api.NewTask("t", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"30"}}
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(memMB)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	return job
}

func TestQueueCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderFIFO, ConcurrentPlacements: 1, WorkloadTimeout: time.Hour,
		}
	})
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	node, _, err := c.Nodes().Info(nodes[0].ID, nil)
	must.NoError(t, err)
	mem := int(node.NodeResources.Memory.MemoryMB) * 6 / 10

	// hog takes most of the node; gate cannot fit and holds the one slot;
	// waiter queues behind it.
	for _, id := range []string{"hog", "gate", "waiter"} {
		m := mem
		if id == "waiter" {
			m = 32
		}
		_, _, err := c.Jobs().Register(sleepJob(id, m), nil)
		must.NoError(t, err)
		if id == "hog" {
			must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
				allocs, _, _ := c.Jobs().Allocations("hog", false, nil)
				return len(allocs) == 1
			}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
		}
	}
	// Wait for the queue to judge hog placed and release gate into the
	// slot: until then hog shows as placing and gate as queued.
	waiterQueued := regexp.MustCompile(`(?m)^1 +default +waiter +50 +queued`)
	gatePlacing := regexp.MustCompile(`(?m)^- +default +gate +50 +placing`)
	var out string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		_, out, _ = cli(t, addr, "queue", "jobs")
		return waiterQueued.MatchString(out) && gatePlacing.MatchString(out)
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	code, out, errOut := cli(t, addr, "queue", "jobs")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Position")
	must.StrContains(t, out, "Est. Start")
	must.RegexMatch(t, waiterQueued, out)
	must.RegexMatch(t, gatePlacing, out)

	code, out, errOut = cli(t, addr, "queue", "status")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`Enabled +\= true`), out)
	must.RegexMatch(t, regexp.MustCompile(`Queued +\= 1`), out)
	must.RegexMatch(t, regexp.MustCompile(`Placing +\= 1`), out)

	code, out, errOut = cli(t, addr, "job", "status", "waiter")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`Batch Queue +\= queued at position 1`), out)

	// Operator controls.
	code, out, errOut = cli(t, addr, "queue", "hold", "waiter")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Job \"waiter\" held in the batch queue\n", out)
	_, out, _ = cli(t, addr, "queue", "jobs")
	must.RegexMatch(t, regexp.MustCompile(`(?m)^1 +default +waiter +50 +queued .*held by an operator; "nomad queue release" lets it go$`), out)
	// Holding a held job, or releasing one that is not held, would
	// change nothing: refused, naming the job's state.
	code, out, errOut = cli(t, addr, "queue", "hold", "waiter")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.StrContains(t, errOut, `job "waiter" in namespace "default" is already held in the batch queue at position 1`)
	code, out, errOut = cli(t, addr, "queue", "release", "waiter")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Job \"waiter\" released in the batch queue\n", out)
	code, out, errOut = cli(t, addr, "queue", "release", "waiter")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.StrContains(t, errOut, `job "waiter" in namespace "default" is not held in the batch queue: it waits queued at position 1`)
	// -namespace narrows the listing; "*" lists every namespace.
	code, out, errOut = cli(t, addr, "queue", "jobs", "-namespace", "other")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "No jobs in the batch queue\n", out)
	for _, ns := range []string{"default", "*"} {
		code, out, errOut = cli(t, addr, "queue", "jobs", "-namespace", ns)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.RegexMatch(t, waiterQueued, out)
	}
	code, _, errOut = cli(t, addr, "queue", "top", "gate")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `job "gate" in namespace "default" is not waiting in the batch queue`)
	code, _, errOut = cli(t, addr, "queue", "top")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "This command takes one argument: <job>")
}

func TestEstimatedStart(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		at   int64
		want string
	}{
		{"unknown", 0, "-"},
		{"due", now.Add(-time.Second).UnixNano(), "now"},
		{"ahead", now.Add(4 * time.Minute).UnixNano(), "in 4m0s"},
		{"rounded to seconds", now.Add(90*time.Second + 400*time.Millisecond).UnixNano(), "in 1m30s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, estimatedStart(tc.at, now))
		})
	}
}
