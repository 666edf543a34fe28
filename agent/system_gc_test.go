package agent

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// PUT /v1/system/gc, as the official client sends it, collects a finished
// job with its evals and allocs, and leaves a running job alone.
func TestSystemGC_CollectsFinishedJob(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	done := mockJob("done", 1)
	done.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "10ms"}
	reg, _, err := c.Jobs().Register(done, nil)
	must.NoError(t, err)
	running := mockJob("running", 1)
	running.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "10m"}
	_, _, err = c.Jobs().Register(running, nil)
	must.NoError(t, err)
	waitAllocStatus(t, c, "done", "complete", 20*time.Second)
	waitAllocStatus(t, c, "running", "running", 20*time.Second)

	must.NoError(t, c.System().GarbageCollect())

	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		_, _, err := c.Jobs().Info("done", nil)
		var ue api.UnexpectedResponseError
		if errors.As(err, &ue) && ue.StatusCode() == 404 {
			return nil
		}
		return errors.New("finished job still there")
	}), wait.Timeout(20*time.Second), wait.Gap(50*time.Millisecond)))

	_, _, err = c.Evaluations().Info(reg.EvalID, nil)
	must.ErrorContains(t, err, "404")
	job, _, err := c.Jobs().Info("running", nil)
	must.NoError(t, err)
	must.Eq(t, "running", *job.Status)
}
