package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
)

// Through the agent, an image that only the local registry holds is
// pulled and runs, anonymously and with the job's auth block; a wrong
// password fails the task with a Driver Failure naming the image and the
// refusal, and no restart although the group allows some: another pull
// would be refused the same way.
func TestDockerDriver_PullFromRegistry(t *testing.T) {
	e := dockertest.StartT(t)
	t.Setenv("DOCKER_HOST", e.Host)
	public := dockertest.NewRegistry(t, "", "")
	private := dockertest.NewRegistry(t, "robot", "s3cret")
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	waitDockerHealthy(t, c, 1)

	pulled := func(jobID, image string, auth map[string]any) *api.Allocation {
		task := dockerTask("main", `echo pulled-$NOMAD_ALLOC_ID`, 32)
		task.Config["image"] = image
		if auth != nil {
			task.Config["auth"] = auth
		}
		register(t, c, execJob(jobID, task, 2))
		return onlyAlloc(t, c, jobID, isTerminal)
	}

	t.Run("anonymous", func(t *testing.T) {
		image := public.Publish(t, e, "agent/app:1")
		alloc := pulled("dk-pull", image, nil)
		must.Eq(t, "complete", alloc.ClientStatus, must.Sprint(eventsText(alloc)))
		must.Eq(t, "pulled-"+alloc.ID+"\n", taskLog(t, a, alloc.ID, "main"))
		must.True(t, hasEvent(alloc, "Driver", "Image "+image+" pulled"))
	})

	t.Run("basic auth", func(t *testing.T) {
		image := private.Publish(t, e, "agent/private:1")
		alloc := pulled("dk-pull-auth", image, map[string]any{"username": "robot", "password": "s3cret"})
		must.Eq(t, "complete", alloc.ClientStatus, must.Sprint(eventsText(alloc)))
		must.Eq(t, "pulled-"+alloc.ID+"\n", taskLog(t, a, alloc.ID, "main"))
	})

	t.Run("wrong password", func(t *testing.T) {
		image := private.Publish(t, e, "agent/refused:1")
		alloc := pulled("dk-pull-wrong", image, map[string]any{"username": "robot", "password": "wrong"})
		must.Eq(t, "failed", alloc.ClientStatus)
		st := alloc.TaskStates["main"]
		must.Eq(t, uint64(0), st.Restarts, must.Sprint("a refused password is not retried"))
		must.True(t, hasEvent(alloc, "Driver Failure", `pull image "`+image+`": authentication failed`),
			must.Sprint(eventsText(alloc)))
		must.True(t, hasEvent(alloc, "Not Restarting", ""))
	})
}

// hasEvent reports whether the alloc's main task has an event of the
// type whose display message contains text.
func hasEvent(alloc *api.Allocation, typ, text string) bool {
	for _, ev := range alloc.TaskStates["main"].Events {
		if ev.Type == typ && strings.Contains(ev.DisplayMessage, text) {
			return true
		}
	}
	return false
}

// waitDockerHealthy waits until n nodes report a healthy docker driver.
func waitDockerHealthy(t *testing.T, c *api.Client, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return err
		}
		healthy := 0
		for _, nd := range nodes {
			if d := nd.Drivers["docker"]; d != nil && d.Healthy {
				healthy++
			}
		}
		if healthy < n {
			return fmt.Errorf("%d of %d nodes with a healthy docker driver", healthy, n)
		}
		return nil
	})
}

// eventsText is the main task's events, for failure messages.
func eventsText(alloc *api.Allocation) string {
	var b strings.Builder
	for _, ev := range alloc.TaskStates["main"].Events {
		fmt.Fprintf(&b, "%s: %s\n", ev.Type, ev.DisplayMessage)
	}
	return b.String()
}
