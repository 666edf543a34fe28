package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// With job_gc_interval and job_gc_threshold of a second, the leader's
// periodic collection removes a finished batch job by itself, without
// a `nomad system gc`; with Nomad's defaults it would stay for hours.
func TestServerTuning_JobGCByInterval(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.JobGCInterval = time.Second
		c.Server.JobGCThreshold = time.Second
		c.Server.RaftTrailingLogs = 300
	})
	c := apiClient(t, a)
	must.Eq(t, time.Second, a.server.Config().JobGCInterval)
	must.Eq(t, time.Second, a.server.Config().JobGCThreshold)
	must.Eq(t, 300, a.server.Config().RaftTrailingLogs)

	done := mockJob("done", 1)
	done.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "10ms"}
	reg, _, err := c.Jobs().Register(done, nil)
	must.NoError(t, err)
	waitAllocStatus(t, c, "done", "complete", 20*time.Second)

	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		_, _, err := c.Jobs().Info("done", nil)
		var ue api.UnexpectedResponseError
		if errors.As(err, &ue) && ue.StatusCode() == 404 {
			return nil
		}
		return errors.New("finished job still there")
	}), wait.Timeout(15*time.Second), wait.Gap(100*time.Millisecond)))
	_, _, err = c.Evaluations().Info(reg.EvalID, nil)
	must.ErrorContains(t, err, "404")

	self, err := c.Agent().Self()
	must.NoError(t, err)
	server, _ := self.Config["Server"].(map[string]any)
	must.Eq[any](t, float64(time.Second), server["JobGCThreshold"])
}

// A low raft_snapshot_threshold with a short raft_snapshot_interval
// makes a server with a data dir write a snapshot file after a handful
// of writes; Nomad's defaults (8192 entries, checked every 2 minutes)
// would not within the test.
func TestServerTuning_RaftSnapshotThreshold(t *testing.T) {
	dataDir := t.TempDir()
	a := NewTestAgent(t, func(c *config.Config) {
		c.DevMode = false
		c.DataDir = dataDir
		c.Server.RaftSnapshotThreshold = 3
		c.Server.RaftSnapshotInterval = 50 * time.Millisecond
	})
	c := apiClient(t, a)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		job := mockJob(id, 1)
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
	}
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		snaps, err := filepath.Glob(filepath.Join(dataDir, "server", "raft", "snapshots", "*", "state.bin"))
		if err != nil || len(snaps) == 0 {
			return fmt.Errorf("no raft snapshot yet (%v)", err)
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
}
