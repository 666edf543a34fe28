package agent

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/client/network"
)

// serviceJob is a service job "id" whose group "g" has a dynamic port
// "http" and a nomad-provider service on it; its raw_exec task "main"
// runs script.
func serviceJob(id, script string, svc *api.Service) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}}
	tg.Services = []*api.Service{svc}
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(10), Delay: new(time.Second), Interval: new(time.Hour), Mode: new("fail")}
	tg.AddTask(shTask("main", script))
	job.AddTaskGroup(tg)
	return job
}

// waitService waits until the catalog lists n instances of name.
func waitService(t *testing.T, c *api.Client, name string, n int) []*api.ServiceRegistration {
	t.Helper()
	var regs []*api.ServiceRegistration
	waitFor(t, 30*time.Second, func() error {
		var err error
		regs, _, err = c.Services().Get(name, nil)
		if err != nil {
			return err
		}
		if len(regs) != n {
			return fmt.Errorf("%d instances of %s, want %d", len(regs), name, n)
		}
		return nil
	})
	return regs
}

// The acceptance scenario of Nomad's built-in service discovery: a
// python web server on a dynamic port is registered with the alloc's
// address and port, its HTTP check turns success, a batch job's template
// renders its address, and a stop takes it out of the catalog.
func TestServiceDiscovery_RegisterCheckTemplateStop(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the test's web server is python3 -m http.server")
	}
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	svc := &api.Service{Name: "web-svc", PortLabel: "http", Provider: "nomad", Tags: []string{"v1"},
		Checks: []api.ServiceCheck{{Name: "alive", Type: "http", Path: "/", Interval: time.Second, Timeout: 2 * time.Second}}}
	job := serviceJob("web", `cd "$NOMAD_TASK_DIR" && exec python3 -m http.server "$NOMAD_PORT_http"`, svc)
	register(t, c, job)
	allocs := jobAllocs(t, c, "web", 1, 30*time.Second, isRunning)
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	ports := alloc.AllocatedResources.Shared.Ports
	must.SliceLen(t, 1, ports)

	regs := waitService(t, c, "web-svc", 1)
	must.Eq(t, ports[0].HostIP, regs[0].Address)
	must.Eq(t, ports[0].Value, regs[0].Port)
	must.Eq(t, alloc.ID, regs[0].AllocID)
	must.Eq(t, "_nomad-task-"+alloc.ID+"-group-g-web-svc-http", regs[0].ID)
	must.Eq(t, []string{"v1"}, regs[0].Tags)

	waitFor(t, 30*time.Second, func() error {
		checks, err := c.Allocations().Checks(alloc.ID, nil)
		if err != nil {
			return err
		}
		for _, ch := range checks {
			if ch.Check == "alive" && ch.Status == "success" {
				must.Eq(t, 200, ch.StatusCode)
				must.Eq(t, "healthiness", ch.Mode)
				must.Eq(t, "web-svc", ch.Service)
				return nil
			}
		}
		return fmt.Errorf("check not passing yet: %+v", checks)
	})

	reader := api.NewBatchJob("reader", "reader", "global", 50)
	reader.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("g", 1)
	tg.ReschedulePolicy = noReschedule()
	task := shTask("main", `cat "$NOMAD_TASK_DIR/addr"`)
	task.Templates = []*api.Template{{EmbeddedTmpl: new(`{{ range nomadService "web-svc" }}{{ .Address }}:{{ .Port }}{{ end }}`), DestPath: new("local/addr")}}
	tg.AddTask(task)
	reader.AddTaskGroup(tg)
	register(t, c, reader)
	done := jobAllocs(t, c, "reader", 1, 30*time.Second, isTerminal)
	must.Eq(t, "complete", done[0].ClientStatus, must.Sprint(done[0].TaskStates))
	must.Eq(t, fmt.Sprintf("%s:%d", ports[0].HostIP, ports[0].Value), taskLogs(t, a, done[0].ID, "main"))

	_, _, err = c.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	waitService(t, c, "web-svc", 0)
}

// A task service whose check keeps failing restarts its task after
// check_restart's limit, with Nomad's event.
func TestServiceDiscovery_CheckRestart(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	// Nothing listens on the port: the tcp check fails every second.
	svc := &api.Service{Name: "dead-svc", PortLabel: "http", Provider: "nomad",
		Checks: []api.ServiceCheck{{Name: "tcp-alive", Type: "tcp", Interval: time.Second, Timeout: time.Second,
			CheckRestart: &api.CheckRestart{Limit: 2}}}}
	job := serviceJob("dead", "exec sleep 600", nil)
	job.TaskGroups[0].Services = nil
	job.TaskGroups[0].Tasks[0].Services = []*api.Service{svc}
	register(t, c, job)
	allocs := jobAllocs(t, c, "dead", 1, 30*time.Second, isRunning)
	waitService(t, c, "dead-svc", 1)

	waitFor(t, 60*time.Second, func() error {
		alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
		if err != nil {
			return err
		}
		ts := alloc.TaskStates["main"]
		if ts == nil || ts.Restarts < 1 {
			return fmt.Errorf("no restart yet: %+v", ts)
		}
		for _, e := range ts.Events {
			if e.Type == "Restart Signaled" && strings.Contains(e.RestartReason, `healthcheck: check "tcp-alive" unhealthy`) {
				return nil
			}
		}
		return fmt.Errorf("no Restart Signaled event with the check's reason: %+v", ts.Events)
	})
}

// In a bridge network a service with address_mode "alloc" is registered
// at the alloc's own address and the port's to, and its check reaches
// the task there; the default (host) mode registers the host port.
func TestServiceDiscovery_BridgeAllocAddress(t *testing.T) {
	skipWithoutBridge(t)
	for _, bin := range []string{"python3", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed", bin)
		}
	}
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	bridgeClient(t, srv, dataDir)
	t.Cleanup(func() {
		m := network.New(network.Config{CNIPath: client.DefaultCNIPath, StateDir: filepath.Join(dataDir, "client", "network")})
		m.CleanLeftovers(context.Background(), func(string) bool { return false })
	})

	job := bridgeJob("svc-bridge", 1)
	job.TaskGroups[0].Services = []*api.Service{
		{Name: "bridge-host", PortLabel: "http", Provider: "nomad"},
		{Name: "bridge-alloc", PortLabel: "http", Provider: "nomad", AddressMode: "alloc",
			Checks: []api.ServiceCheck{{Name: "in-ns", Type: "http", Path: "/", AddressMode: "alloc", Interval: time.Second, Timeout: 2 * time.Second}}},
	}
	register(t, c, job)
	stubs := jobAllocs(t, c, "svc-bridge", 1, 60*time.Second, isRunning)
	alloc, _, err := c.Allocations().Info(stubs[0].ID, nil)
	must.NoError(t, err)

	host := waitService(t, c, "bridge-host", 1)[0]
	must.Eq(t, hostPort(t, alloc, "http"), host.Port)
	inNS := waitService(t, c, "bridge-alloc", 1)[0]
	waitFor(t, 20*time.Second, func() error {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return err
		}
		if a.NetworkStatus == nil || a.NetworkStatus.Address == "" {
			return fmt.Errorf("no network status yet")
		}
		alloc = a
		return nil
	})
	must.Eq(t, alloc.NetworkStatus.Address, inNS.Address)
	must.Eq(t, 8080, inNS.Port)

	waitFor(t, 30*time.Second, func() error {
		checks, err := c.Allocations().Checks(alloc.ID, nil)
		if err != nil {
			return err
		}
		for _, ch := range checks {
			if ch.Check == "in-ns" && ch.Status == "success" {
				return nil
			}
		}
		return fmt.Errorf("check not passing yet: %+v", checks)
	})
	_, _, err = c.Jobs().Deregister("svc-bridge", false, nil)
	must.NoError(t, err)
	waitService(t, c, "bridge-alloc", 0)
}

// A client restarted while its alloc runs registers the alloc's services
// again, whatever became of them meanwhile.
func TestServiceDiscovery_ClientRestartRegistersAgain(t *testing.T) {
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	startClient := func() *Agent {
		return NewTestAgent(t, func(c *config.Config) {
			c.DevMode = false
			c.Server.Enabled = false
			c.DataDir = dataDir
			c.Client.Servers = []string{srv.RPCAddr()}
			c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
		})
	}
	cl := startClient()

	svc := &api.Service{Name: "sticky", PortLabel: "http", Provider: "nomad"}
	register(t, c, serviceJob("sticky", "exec sleep 600", svc))
	jobAllocs(t, c, "sticky", 1, 30*time.Second, isRunning)
	reg := waitService(t, c, "sticky", 1)[0]

	must.NoError(t, cl.Shutdown())
	_, err := c.Services().Delete("sticky", reg.ID, nil)
	must.NoError(t, err)
	waitService(t, c, "sticky", 0)

	startClient()
	again := waitService(t, c, "sticky", 1)[0]
	must.Eq(t, reg.ID, again.ID)
	must.Eq(t, reg.Port, again.Port)
}

// Script checks run in the task through its driver: one that passes is a
// success, and one whose command does not exist is a failure with the
// reason as its output, the task running on.
func TestServiceDiscovery_ScriptChecks(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	svc := &api.Service{Name: "scripted", PortLabel: "http", Provider: "nomad", Checks: []api.ServiceCheck{
		{Name: "ok", Type: "script", Command: "/bin/sh", Args: []string{"-c", "echo fine"}, TaskName: "main", Interval: time.Second, Timeout: 2 * time.Second},
		{Name: "missing", Type: "script", Command: "/no/such/binary", TaskName: "main", Interval: time.Second, Timeout: 2 * time.Second},
	}}
	register(t, c, serviceJob("scripted", "exec sleep 600", svc))
	allocs := jobAllocs(t, c, "scripted", 1, 30*time.Second, isRunning)
	waitFor(t, 30*time.Second, func() error {
		checks, err := c.Allocations().Checks(allocs[0].ID, nil)
		if err != nil {
			return err
		}
		got := map[string]api.AllocCheckStatus{}
		for _, ch := range checks {
			got[ch.Check] = ch
		}
		if got["ok"].Status != "success" || got["missing"].Status != "failure" {
			return fmt.Errorf("checks not run yet: %+v", got)
		}
		must.Eq(t, "fine\n", got["ok"].Output)
		must.StrContains(t, got["missing"].Output, "/no/such/binary")
		return nil
	})
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	must.Eq(t, "running", alloc.ClientStatus)
}
