package docker

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// runTask runs a batch task of the docker driver through a task runner,
// as the client does, and returns its final state.
func runTask(t *testing.T, d *Driver, cfg map[string]any) *structs.TaskState {
	t.Helper()
	cfg["network_mode"] = "none"
	task := &structs.Task{Name: "web", Driver: Name, Config: cfg}
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "j.g[0]", TaskGroup: "g", JobID: "j",
		Job: &structs.Job{ID: "j", Type: structs.JobTypeBatch, TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{task}}}}}
	ad := allocdir.New(t.TempDir(), alloc.ID)
	must.NoError(t, ad.Build())
	tr := taskrunner.New(taskrunner.Config{Alloc: alloc, Task: task, AllocDir: ad, Driver: d,
		Logger: hclog.NewNullLogger(), JobType: structs.JobTypeBatch})
	go tr.Run()
	tr.Start()
	select {
	case <-tr.WaitCh():
	case <-time.After(3 * time.Minute):
		t.Fatalf("task not done; state %+v", tr.State())
	}
	// The runner destroyed the task's container when it ended.
	must.Eq(t, 0, containersOf(t, dockertest.Require(t), alloc.ID, true))
	return tr.State()
}

func eventTypes(st *structs.TaskState) (types, shown []string) {
	for _, e := range st.Events {
		types = append(types, e.Type)
		shown = append(shown, e.DisplayMessage)
	}
	return types, shown
}

// A task whose image only the registry has shows Nomad's Driver events,
// "Downloading image" and then the pulled image, before it starts; with
// the registry's credentials in its auth block when the registry asks.
func TestTaskRunner_PullShowsDriverEvents(t *testing.T) {
	e := dockertest.Require(t)
	for _, tc := range []struct {
		name, user, password string
	}{
		{name: "anonymous"},
		{name: "basic auth", user: "robot", password: "s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := dockertest.NewRegistry(t, tc.user, tc.password)
			image := reg.Publish(t, e, "events/app:1")
			d := newDriver(t, e, nil)
			cfg := map[string]any{"image": image, "command": "true"}
			if tc.user != "" {
				cfg["auth"] = map[string]any{"username": tc.user, "password": tc.password}
			}
			st := runTask(t, d, cfg)
			types, shown := eventTypes(st)
			must.False(t, st.Failed, must.Sprintf("%q", shown))
			must.Eq(t, []string{structs.TaskReceived, structs.TaskSetup, structs.TaskDriverMessage, structs.TaskDriverMessage,
				structs.TaskStarted, structs.TaskTerminated}, types, must.Sprintf("%q", shown))
			must.Eq(t, "Downloading image", shown[2])
			must.Eq(t, "Image "+image+" pulled", shown[3])
			must.Eq(t, image, st.Events[2].Details["image"])
		})
	}
}

// A wrong registry password fails the task at once: a Driver Failure
// naming the image and saying the registry refused the credentials, and
// no restart, since another pull would be refused the same way.
func TestTaskRunner_WrongRegistryPasswordFailsTask(t *testing.T) {
	e := dockertest.Require(t)
	reg := dockertest.NewRegistry(t, "robot", "s3cret")
	image := reg.Publish(t, e, "events/private:1")
	d := newDriver(t, e, nil)
	st := runTask(t, d, map[string]any{"image": image, "command": "true",
		"auth": map[string]any{"username": "robot", "password": "wrong"}})
	types, shown := eventTypes(st)
	must.True(t, st.Failed)
	must.Eq(t, uint64(0), st.Restarts)
	must.Eq(t, []string{structs.TaskReceived, structs.TaskSetup, structs.TaskDriverMessage,
		structs.TaskDriverFailure, structs.TaskNotRestarting}, types, must.Sprintf("%q", shown))
	must.Eq(t, "Downloading image", shown[2])
	must.StrContains(t, shown[3], `pull image "`+image+`": authentication failed`)
	must.Eq(t, taskrunner.ReasonUnrecoverable, shown[4])
}
