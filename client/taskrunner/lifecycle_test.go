package taskrunner

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// A user's restart runs the task again at once and outside the restart
// policy: with no attempts left the task still restarts, counts one
// restart, and a task that is not running refuses.
func TestTaskRunner_UserRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Name: "t", Driver: mock.Name, Config: map[string]any{"run_for": "1h"}}
		tr := runMock(t, &structs.RestartPolicy{Attempts: 0, Interval: time.Hour, Delay: time.Minute, Mode: structs.RestartPolicyModeFail}, task)
		synctest.Wait()
		must.Eq(t, structs.TaskStateRunning, tr.State().State)

		must.NoError(t, tr.Restart())
		synctest.Wait()
		st := tr.State()
		must.Eq(t, structs.TaskStateRunning, st.State)
		must.Eq(t, uint64(1), st.Restarts)
		var types []string
		for _, e := range st.Events {
			types = append(types, e.Type)
			if e.Type == structs.TaskRestartSignal {
				must.Eq(t, "User requested restart", e.DisplayMessage)
			}
			if e.Type == structs.TaskRestarting {
				must.Eq(t, "Task restarting in 0s", e.DisplayMessage)
			}
		}
		must.Eq(t, []string{structs.TaskRestartSignal, structs.TaskTerminated, structs.TaskRestarting, structs.TaskStarted}, types[len(types)-4:])

		tr.Kill(KillOpts{})
		<-tr.WaitCh()
		must.True(t, errors.Is(tr.Restart(), ErrTaskNotRunning))
		must.True(t, errors.Is(tr.Signal("SIGHUP"), ErrTaskNotRunning))
	})
}
