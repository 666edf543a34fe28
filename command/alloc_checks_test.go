package command

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

// nomad alloc checks against a real agent whose raw_exec task serves
// HTTP on a dynamic port, checked by a group service's http check.
func TestCLI_AllocChecks(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the test's web server is python3 -m http.server")
	}
	a := agenttest.New(t, func(c *config.Config) {
		c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
	})
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	job := api.NewServiceJob("clichecks", "clichecks", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}}
	tg.Services = []*api.Service{{Name: "cli-web", PortLabel: "http", Provider: "nomad",
		Checks: []api.ServiceCheck{{Name: "alive", Type: "http", Path: "/", Interval: time.Second, Timeout: 2 * time.Second}}}}
	task := api.NewTask("main", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", `cd "$NOMAD_TASK_DIR" && exec python3 -m http.server "$NOMAD_PORT_http"`}}
	task.KillTimeout = new(time.Second)
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(32)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)

	var allocID, out string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		allocs, _, err := c.Jobs().Allocations("clichecks", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return fmt.Errorf("allocs %v", allocs)
		}
		allocID = allocs[0].ID
		var code int
		code, out, _ = cli(t, addr, "alloc", "checks", allocID[:8])
		if code != 0 || !regexp.MustCompile(`Status\s+=  success`).MatchString(out) {
			return fmt.Errorf("check not passing yet: %q", out)
		}
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))

	want := regexp.MustCompile(`\AStatus of 1 Nomad Service Checks

ID          =  [0-9a-f]{64}
Name        =  alive
Group       =  clichecks\.g\[0\]
Task        =  \(group\)
Service     =  cli-web
Status      =  success
StatusCode  =  200
Mode        =  healthiness
Timestamp   =  \S+
Output      =  nomad: http ok

\z`)
	must.True(t, want.MatchString(out), must.Sprint(out))

	code, jsonOut, _ := cli(t, addr, "alloc", "checks", "-json", allocID)
	must.Eq(t, 0, code)
	var checks map[string]api.AllocCheckStatus
	must.NoError(t, json.Unmarshal([]byte(jsonOut), &checks))
	must.MapLen(t, 1, checks)
	for id, ch := range checks {
		must.Eq(t, id, ch.ID)
		must.Eq(t, "success", ch.Status)
	}

	code, _, stderr := cli(t, addr, "alloc", "checks")
	must.Eq(t, 1, code)
	must.StrContains(t, stderr, "An allocation ID is required")
	code, _, stderr = cli(t, addr, "alloc", "checks", "ffffffff")
	must.Eq(t, 1, code)
	must.StrContains(t, stderr, "No allocation(s) with prefix or id")
}
