package taskrunner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/structs"
)

// A check's restart is a failed run, as in Nomad: the restart policy
// delays it and counts it, and once the attempts are spent the task
// fails.
func TestTaskRunner_RestartFailureFollowsRestartPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1h"}}
		tr := runMock(t, &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeFail}, task)
		synctest.Wait()
		must.Eq(t, structs.TaskStateRunning, tr.State().State)

		reason := `healthcheck: check "alive" unhealthy`
		must.NoError(t, tr.RestartFailure(reason))
		synctest.Wait()
		st := tr.State()
		must.Eq(t, structs.TaskStatePending, st.State, must.Sprint("waiting out the policy's delay"))
		must.Eq(t, uint64(1), st.Restarts)
		last := st.Events[len(st.Events)-3:]
		must.Eq(t, structs.TaskRestartSignal, last[0].Type)
		must.Eq(t, reason, last[0].RestartReason)
		must.Eq(t, structs.TaskTerminated, last[1].Type)
		must.Eq(t, structs.TaskRestarting, last[2].Type)
		must.Eq(t, ReasonWithinPolicy, last[2].RestartReason)

		time.Sleep(10*time.Second + time.Millisecond)
		synctest.Wait()
		must.Eq(t, structs.TaskStateRunning, tr.State().State)

		must.NoError(t, tr.RestartFailure(reason))
		<-tr.WaitCh()
		st = tr.State()
		must.Eq(t, structs.TaskStateDead, st.State)
		must.True(t, st.Failed)
		e := st.Events[len(st.Events)-1]
		must.Eq(t, structs.TaskNotRestarting, e.Type)
		must.StrContains(t, e.RestartReason, "Exceeded allowed attempts 1")
	})
}
