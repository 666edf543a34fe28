package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/nomadq/nomadq/structs"
)

// With the batch queue on, a queued docker job goes only to a node whose
// docker driver is healthy: while the only client's engine endpoint does
// not answer, the job waits in the queue as constrained, the reason
// naming docker; a second client with a healthy engine then runs it.
func TestDockerDriver_QueuePlacesOnHealthyNode(t *testing.T) {
	e := dockertest.StartT(t)
	t.Setenv("DOCKER_HOST", "")
	srv := NewTestAgent(t, func(c *config.Config) {
		c.Client.Enabled = false
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderFIFO, ConcurrentPlacements: 1, WorkloadTimeout: time.Hour,
		}
	})
	c := apiClient(t, srv)
	dockerClient := func(endpoint string) *Agent {
		return NewTestAgent(t, func(cfg *config.Config) {
			cfg.DevMode = false
			cfg.Server.Enabled = false
			cfg.DataDir = t.TempDir()
			cfg.Client.Servers = []string{srv.RPCAddr()}
			cfg.Plugins = append(cfg.Plugins, &config.Plugin{Name: "docker", Config: map[string]any{"endpoint": endpoint}})
		})
	}
	// A socket path nothing listens on: the engine does not answer.
	down := dockerClient("unix://" + filepath.Join(t.TempDir(), "nobody.sock"))
	waitFor(t, 30*time.Second, func() error {
		n, _, err := c.Nodes().Info(down.Client().NodeID(), nil)
		if err != nil {
			return err
		}
		if n.Status != "ready" {
			return fmt.Errorf("node %s", n.Status)
		}
		if d := n.Drivers["docker"]; d != nil && d.Healthy {
			return fmt.Errorf("docker is healthy on a node without an engine: %+v", d)
		}
		return nil
	})

	job := execJob("dk-queued", dockerTask("main", `echo queued-$NOMAD_ALLOC_ID`, 32), 0)
	qRegister(t, c, job)
	waitFor(t, 30*time.Second, func() error {
		e := queueEntry(t, c, "dk-queued")
		if e == nil || e.Status != structs.BatchQueueStatusConstrained {
			return fmt.Errorf("queue entry: %+v", e)
		}
		return nil
	})
	entry := queueEntry(t, c, "dk-queued")
	must.Eq(t, "Constrained", entry.Reason)
	must.StrContains(t, strings.ToLower(entry.ReasonDetail), "docker", must.Sprintf("reason detail: %q", entry.ReasonDetail))
	t.Logf("reason without a healthy docker node: %s: %q", entry.Reason, entry.ReasonDetail)
	allocs, _, err := c.Jobs().Allocations("dk-queued", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)

	up := dockerClient(e.Host)
	alloc := onlyAlloc(t, c, "dk-queued", isTerminal)
	must.Eq(t, up.Client().NodeID(), alloc.NodeID)
	must.Eq(t, "complete", alloc.ClientStatus, must.Sprint(eventsText(alloc)))
}
