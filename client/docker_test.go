package client

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/client/drivers/docker"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// dockerTask runs script under busybox's sh in the test image.
func dockerTask(name, script string, memoryMB int) *structs.Task {
	return &structs.Task{
		Name:   name,
		Driver: docker.Name,
		Config: map[string]any{
			"image": dockertest.Image, "command": "/bin/sh", "args": []any{"-c", script},
			"network_mode": "none",
		},
		KillTimeout: 500 * time.Millisecond,
		Resources:   &structs.Resources{CPU: 20, MemoryMB: memoryMB},
		LogConfig:   &structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 5},
	}
}

// runningContainers counts the engine's running containers labelled with
// the alloc.
func runningContainers(t *testing.T, e *dockertest.Engine, allocID string) int {
	t.Helper()
	res, err := e.Client.ContainerList(context.Background(), client.ContainerListOptions{
		Filters: client.Filters{}.Add("label", docker.LabelAllocID+"="+allocID),
	})
	must.NoError(t, err)
	return len(res.Items)
}

// The docker driver's acceptance scenarios through a real server and
// client, the driver enabled by the client's config and pointed at a
// test engine of this test's own.
func TestClient_Docker(t *testing.T) {
	e := dockertest.StartT(t)
	srv := testServer(t)
	dataDir := t.TempDir()
	withDocker := func(cfg *Config) {
		cfg.DockerPluginConfig = map[string]any{"endpoint": e.Host}
	}
	c1 := testClient(t, srv, dataDir, withDocker)
	must.Wait(t, waitFor(func() bool {
		n, err := srv.State().NodeByID(nil, c1.NodeID())
		return err == nil && n != nil && n.Drivers["docker"] != nil && n.Drivers["docker"].Healthy
	}))
	n, err := srv.State().NodeByID(nil, c1.NodeID())
	must.NoError(t, err)
	must.Eq(t, "true", n.Attributes["driver.docker"])
	must.MapContainsKey(t, n.Attributes, "driver.docker.version")

	t.Run("hello logs", func(t *testing.T) {
		register(t, srv, batchJob("dk-hello", dockerTask("main", `echo hello-$NOMAD_ALLOC_ID`, 32)))
		a := serverAlloc(t, srv, "dk-hello", time.Minute, status(structs.AllocClientStatusComplete))
		logs := filepath.Join(allocdir.New(c1.cfg.AllocDir, a.ID).LogDir(), "main.stdout.0")
		b, err := os.ReadFile(logs)
		must.NoError(t, err)
		must.Eq(t, "hello-"+a.ID+"\n", string(b))
	})

	t.Run("exit 3", func(t *testing.T) {
		register(t, srv, batchJob("dk-exit", dockerTask("main", `exit 3`, 32)))
		a := serverAlloc(t, srv, "dk-exit", time.Minute, status(structs.AllocClientStatusFailed))
		ev := findEvent(a.TaskStates["main"], structs.TaskTerminated)
		must.NotNil(t, ev, must.Sprint(describeTasks(a.TaskStates)))
		must.Eq(t, "Exit Code: 3", ev.DisplayMessage)
	})

	t.Run("max_run_duration", func(t *testing.T) {
		job := batchJob("dk-mrd", dockerTask("main", `exec sleep 600`, 32))
		job.TaskGroups[0].MaxRunDuration = new(3 * time.Second)
		register(t, srv, job)
		a := serverAlloc(t, srv, "dk-mrd", time.Minute, status(structs.AllocClientStatusComplete))
		must.Eq(t, structs.AllocTimeoutReasonMaxRunDuration, a.ClientDescription)
		must.Eq(t, 0, runningContainers(t, e, a.ID))
	})

	t.Run("oom", func(t *testing.T) {
		register(t, srv, batchJob("dk-oom", dockerTask("main", `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo ${#x}`, 32)))
		a := serverAlloc(t, srv, "dk-oom", time.Minute, status(structs.AllocClientStatusFailed))
		ev := findEvent(a.TaskStates["main"], structs.TaskTerminated)
		must.NotNil(t, ev, must.Sprint(describeTasks(a.TaskStates)))
		must.Eq(t, "true", ev.Details["oom_killed"])
		must.StrContains(t, ev.DisplayMessage, `Exit Message: "OOM Killed"`)
	})

	// It replaces the client: after the jobs of c1.
	t.Run("restart re-attaches", func(t *testing.T) {
		register(t, srv, batchJob("dk-long", dockerTask("main",
			`echo run >> /local/runs; echo before; while [ ! -f /local/go ]; do sleep 0.05; done; echo after; exit 0`, 32)))
		a := serverAlloc(t, srv, "dk-long", time.Minute, status(structs.AllocClientStatusRunning))
		local := allocdir.New(c1.cfg.AllocDir, a.ID).LocalDir("main")
		waitFile(t, filepath.Join(local, "runs"), func(s string) bool { return s == "run\n" })
		stdout := filepath.Join(allocdir.New(c1.cfg.AllocDir, a.ID).LogDir(), "main.stdout.0")
		waitFile(t, stdout, func(s string) bool { return s == "before\n" })

		c1.crash()
		c2 := testClient(t, srv, dataDir, withDocker)
		ar, err := c2.AllocRunner(a.ID)
		must.NoError(t, err)
		st, _ := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusRunning, st)
		must.Eq(t, 1, runningContainers(t, e, a.ID))

		must.NoError(t, os.WriteFile(filepath.Join(local, "go"), nil, 0o644))
		a = serverAlloc(t, srv, "dk-long", time.Minute, status(structs.AllocClientStatusComplete))
		runs, err := os.ReadFile(filepath.Join(local, "runs"))
		must.NoError(t, err)
		must.Eq(t, "run\n", string(runs), must.Sprint("the container ran once"))
		ts := a.TaskStates["main"]
		must.Eq(t, 1, strings.Count(strings.Join(eventTypes(ts), ","), "Started"))
		must.Eq(t, "Exit Code: 0", findEvent(ts, structs.TaskTerminated).DisplayMessage)
		b, err := os.ReadFile(stdout)
		must.NoError(t, err)
		must.Eq(t, "before\nafter\n", string(b), must.Sprint("no lost and no repeated lines"))
	})

	t.Run("health follows the engine", func(t *testing.T) {
		p := e.Proxy(t)
		// A server of its own: its only node is this client's.
		srv := testServer(t)
		c := testClient(t, srv, "", func(cfg *Config) {
			cfg.DockerPluginConfig = map[string]any{"endpoint": p.Host}
			cfg.DriverHealthInterval = 50 * time.Millisecond
		})
		dockerHealth := func(want bool) func() bool {
			return func() bool {
				n, err := srv.State().NodeByID(nil, c.NodeID())
				if err != nil || n == nil || n.Drivers["docker"] == nil {
					return false
				}
				d := n.Drivers["docker"]
				_, hasVersion := n.Attributes["driver.docker.version"]
				return d.Detected && d.Healthy == want && hasVersion == want
			}
		}
		must.Wait(t, waitFor(dockerHealth(true)))
		p.Close()
		must.Wait(t, waitFor(dockerHealth(false)))
		n, err := srv.State().NodeByID(nil, c.NodeID())
		must.NoError(t, err)
		must.Eq(t, "Failed to connect to docker daemon", n.Drivers["docker"].HealthDescription)
		// A docker job waits while no node has a healthy docker driver
		// and is placed once the engine is back.
		register(t, srv, batchJob("dk-waits", dockerTask("main", `echo placed`, 32)))
		must.Wait(t, waitFor(func() bool {
			evals, err := srv.State().EvalsByJob(nil, "default", "dk-waits")
			if err != nil {
				return false
			}
			for _, ev := range evals {
				if ev.Status == structs.EvalStatusBlocked {
					return true
				}
			}
			return false
		}))
		allocs, err := srv.State().AllocsByJob(nil, "default", "dk-waits", true)
		must.NoError(t, err)
		must.SliceEmpty(t, allocs)
		must.NoError(t, p.Open())
		must.Wait(t, waitFor(dockerHealth(true)))
		a := serverAlloc(t, srv, "dk-waits", time.Minute, status(structs.AllocClientStatusComplete))
		must.Eq(t, c.NodeID(), a.NodeID)
	})
}
