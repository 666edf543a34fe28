package command

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// queueJobFile writes a batch job file: one raw_exec task that sleeps,
// asking for memMB, with an extra line inside the group.
func queueJobFile(t *testing.T, id string, memMB int, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), id+".nomad.hcl")
	src := fmt.Sprintf(`job %q {
  type        = "batch"
  datacenters = ["*"]
  group "g" {
    %s
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["30"]
      }
      resources {
        cpu    = 20
        memory = %d
      }
    }
  }
}
`, id, extra, memMB)
	must.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	return path
}

// With the queue on, waiting in it is not failing: "job run" says where
// the job waits and returns 0 at once, a job released into a full
// cluster that waits in the queue for capacity is not "failed to place"
// (exit 0), a job no node can run still exits 2, and "job status" shows
// the queue state with its reason in words and counts the waiting job as
// Queued in its summary.
func TestQueue_JobRunReturnsOnceQueued(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
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

	// A job no node can ever run is a placement failure, queue or not.
	code, out, errOut := cli(t, addr, "job", "run", queueJobFile(t, "nowhere", 32, `constraint {
      attribute = "${attr.kernel.name}"
      value     = "plan9"
    }`))
	must.Eq(t, 2, code, must.Sprint(out, errOut))
	must.StrContains(t, out, "failed to place")

	code, out, errOut = cli(t, addr, "job", "run", queueJobFile(t, "hog", mem, ""))
	must.Eq(t, 0, code, must.Sprint(out, errOut))

	// gate is released into a full cluster: it waits in the queue for
	// capacity, holding the one slot.
	code, out, errOut = cli(t, addr, "job", "run", queueJobFile(t, "gate", mem, ""))
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	t.Log(out)
	must.StrContains(t, out, "the job waits in the batch queue for capacity")
	must.StrContains(t, out, `Job "gate" placing in the batch queue (`)
	must.StrNotContains(t, out, "failed to place")

	// waiter queues behind it: job run returns at once.
	start := time.Now()
	code, out, errOut = cli(t, addr, "job", "run", queueJobFile(t, "waiter", 32, ""))
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	must.Less(t, 30*time.Second, time.Since(start))
	t.Log(out)
	must.StrContains(t, out, `Job "waiter" queued at position 1 in the batch queue (first in line, waiting for a free placement slot)`)
	must.StrContains(t, out, "Ctrl-C leaves it queued")
	must.StrContains(t, out, `"nomad job run -detach" returns at once`)
	must.StrContains(t, out, `accepted into the batch queue; "nomad job status waiter" shows its place`)

	code, out, errOut = cli(t, addr, "job", "status", "waiter")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`Batch Queue +\= queued at position 1 \(first in line, waiting for a free placement slot\)`), out)
	must.RegexMatch(t, regexp.MustCompile(`(?m)^g +1 +0 +0 +0 +0 +0 +0$`), out, must.Sprint("Queued counts the job waiting in the queue"))

	// Stopping a queued job takes it out of the queue and out of Queued.
	_, _, err = c.Jobs().Deregister("waiter", false, nil)
	must.NoError(t, err)
	waitFor(t, "the stopped job's Queued to drop", 10*time.Second, func() error {
		s, _, err := c.Jobs().Summary("waiter", nil)
		if err != nil {
			return err
		}
		if q := s.Summary["g"].Queued; q != 0 {
			return fmt.Errorf("queued %d", q)
		}
		return nil
	})

	code, out, errOut = cli(t, addr, "job", "status", "gate")
	must.Eq(t, 0, code, must.Sprint(errOut))
	t.Log(out)
	must.RegexMatch(t, regexp.MustCompile(`Batch Queue +\= placing \(the scheduler is placing its allocations, stalled if none is placed by `), out)
	must.RegexMatch(t, regexp.MustCompile(`(?m)^g +1 +0 +0 +0 +0 +0 +0$`), out)
}
