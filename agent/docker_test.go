package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

func dockerTask(name, script string, memoryMB int) *api.Task {
	task := api.NewTask(name, "docker")
	task.Config = map[string]any{
		"image": dockertest.Image, "command": "/bin/sh", "args": []string{"-c", script},
		"network_mode": "none",
	}
	task.KillTimeout = new(500 * time.Millisecond)
	task.Require(&api.Resources{CPU: new(50), MemoryMB: new(memoryMB)})
	return task
}

// A dev agent with no plugin "docker" block reaches the engine at
// DOCKER_HOST, as Nomad's does: its docker tasks' logs, exit codes and
// exec go through the agent's HTTP API.
func TestDockerDriver_DevAgent(t *testing.T) {
	e := dockertest.StartT(t)
	t.Setenv("DOCKER_HOST", e.Host)
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	waitFor(t, 30*time.Second, func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Drivers["docker"] == nil || !nodes[0].Drivers["docker"].Healthy {
			return fmt.Errorf("no node with a healthy docker driver yet: %+v", nodes)
		}
		return nil
	})

	t.Run("hello logs", func(t *testing.T) {
		register(t, c, execJob("dk-hello", dockerTask("main", `echo hello-$NOMAD_ALLOC_ID`, 32), 0))
		alloc := onlyAlloc(t, c, "dk-hello", isTerminal)
		must.Eq(t, "complete", alloc.ClientStatus)
		must.Eq(t, "hello-"+alloc.ID+"\n", taskLog(t, a, alloc.ID, "main"))
	})

	t.Run("exit 3", func(t *testing.T) {
		register(t, c, execJob("dk-exit", dockerTask("main", `exit 3`, 32), 0))
		alloc := onlyAlloc(t, c, "dk-exit", isTerminal)
		must.Eq(t, "failed", alloc.ClientStatus)
		var term *api.TaskEvent
		for _, ev := range alloc.TaskStates["main"].Events {
			if ev.Type == "Terminated" {
				term = ev
			}
		}
		must.NotNil(t, term)
		must.Eq(t, "Exit Code: 3", term.DisplayMessage)
		must.Eq(t, 3, term.ExitCode)
	})

	t.Run("exec", func(t *testing.T) {
		register(t, c, execJob("dk-exec", dockerTask("main", `echo inside > /local/marker; exec sleep 300`, 32), 0))
		alloc := onlyAlloc(t, c, "dk-exec", isRunning)
		out, _, code, err := wsExec(t, a.HTTPAddr(), alloc.ID, "main", false, "", "/bin/sh", "-c", `cat /local/marker; echo "dir=$NOMAD_TASK_DIR"; exit 4`)
		must.NoError(t, err)
		must.Eq(t, 4, code, must.Sprint(out))
		must.Eq(t, "inside\ndir=/local\n", out)
	})
	// The engine named by the config file's plugin "docker" block, not
	// by DOCKER_HOST, is the one the client uses: without the block
	// handed over, the driver would look at the default socket, where no
	// engine runs here, and stay unhealthy. A key the driver does not
	// know stops the agent at start, named.
	t.Run("plugin block from the config file", func(t *testing.T) {
		t.Setenv("DOCKER_HOST", "")
		file := fmt.Sprintf("plugin \"docker\" {\n  config {\n    endpoint = %q\n    gc {\n      container = false\n    }\n  }\n}\n", e.Host)
		b := NewTestAgent(t, func(cfg *config.Config) {
			must.NoError(t, config.Parse(cfg, "docker.hcl", []byte(file), func(w string) { t.Errorf("warning: %s", w) }))
		})
		bc := apiClient(t, b)
		waitFor(t, 30*time.Second, func() error {
			nodes, _, err := bc.Nodes().List(nil)
			if err != nil {
				return err
			}
			if len(nodes) != 1 || nodes[0].Drivers["docker"] == nil || !nodes[0].Drivers["docker"].Healthy {
				return fmt.Errorf("no node with a healthy docker driver yet: %+v", nodes)
			}
			return nil
		})

		_, err := StartLocal(func(cfg *config.Config) {
			must.NoError(t, config.Parse(cfg, "docker.hcl", []byte("plugin \"docker\" {\n  config {\n    bogus_key = 1\n  }\n}\n"), func(string) {}))
		}, testLogOutput(), 60*time.Second)
		must.ErrorContains(t, err, "bogus_key")
	})
}
