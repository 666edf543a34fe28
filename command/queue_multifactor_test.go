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

// TestQueueMultifactorCommands: queue priority prints a waiting job's
// effective priority and its factors; queue usage lists the namespaces'
// decayed usage and resets one; both refuse what they cannot do.
func TestQueueMultifactorCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderMultifactor, ConcurrentPlacements: 1, WorkloadTimeout: time.Hour,
			Multifactor: structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 2000, FairShareWeight: 500,
				MaxAge: time.Hour, UsageHalfLife: time.Hour},
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
	row := regexp.MustCompile(`(?m)^1 +default +waiter +([0-9.]+) +500\.00 +([0-9.]+) +([0-9.]+) +0\.00$`)
	var out, errOut string
	var code int
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		code, out, errOut = cli(t, addr, "queue", "priority", "waiter")
		return code == 0 && row.MatchString(out)
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)), must.Sprintf("%d %s %s", code, out, errOut))
	must.StrContains(t, out, "Effective Priority")
	must.StrContains(t, out, "Age")
	must.StrContains(t, out, "FairShare")

	code, out, errOut = cli(t, addr, "job", "status", "waiter")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`(?m)^Effective Priority += [0-9]+\.[0-9]{2}$`), out)

	code, _, errOut = cli(t, addr, "queue", "priority", "gate")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `job "gate" is not waiting in the batch queue`)

	code, out, errOut = cli(t, addr, "queue", "usage")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Fair Share")
	must.RegexMatch(t, regexp.MustCompile(`(?m)^default +1 +[0-9.]+ +[0-9.]+ +1\.0000 +[0-9.]+ +-$`), out)

	code, out, errOut = cli(t, addr, "queue", "usage", "-reset", "default")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Usage of namespace \"default\" reset\n", out)
	_, out, _ = cli(t, addr, "queue", "usage")
	must.RegexMatch(t, regexp.MustCompile(`(?m)^default +1 +.* \d{4}-\d{2}-\d{2}`), out)
	code, _, errOut = cli(t, addr, "queue", "usage", "-reset", "nope")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `namespace "nope" not found`)

	// set-config changes only the weights given; the server refuses a
	// negative one, naming it, and keeps the stored ones.
	code, _, errOut = cli(t, addr, "operator", "scheduler", "set-config", "-batch-queue-size-weight", "50", "-batch-queue-max-age", "2h")
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, _, errOut = cli(t, addr, "operator", "scheduler", "set-config", "-batch-queue-age-weight", "-1")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "BatchQueue.Multifactor.AgeWeight -1 is not allowed")
	code, out, errOut = cli(t, addr, "operator", "scheduler", "get-config")
	must.Eq(t, 0, code, must.Sprint(errOut))
	for _, want := range []string{`(?m)^Priority Weight += 1000$`, `(?m)^Age Weight += 2000$`, `(?m)^Fair Share Weight += 500$`,
		`(?m)^Size Weight += 50$`, `(?m)^Max Age += 2h0m0s$`, `(?m)^Usage Half-Life += 1h0m0s$`} {
		must.RegexMatch(t, regexp.MustCompile(want), out)
	}
}
