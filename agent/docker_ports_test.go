package agent

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
)

// The most common shape of a Nomad docker job: a group on the host's
// network with port "http" { to = 80 } and a task with ports = ["http"]:
// the engine's bridge publishes the scheduler's host port, on the port's
// host IP, to port 80 in the container, and a busybox httpd there answers
// from the host.
func TestDockerDriver_PortsOnDockerBridge(t *testing.T) {
	e := dockertest.StartTWith(t, dockertest.Options{Bridge: true})
	t.Setenv("DOCKER_HOST", e.Host)
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	waitDockerHealthy(t, c, 1)

	job := api.NewServiceJob("dk-ports", "dk-ports", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("web", 1)
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http", To: 80}}}}
	task := dockerTask("server", `echo "hello-$NOMAD_ALLOC_ID port $NOMAD_PORT_http" > /local/index.html; exec httpd -f -p 80 -h /local`, 32)
	delete(task.Config, "network_mode")
	task.Config["ports"] = []string{"http"}
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	register(t, c, job)
	alloc := onlyAlloc(t, c, "dk-ports", isRunning)

	var addr string
	for _, p := range alloc.AllocatedResources.Shared.Ports {
		if p.Label == "http" {
			addr = net.JoinHostPort(p.HostIP, strconv.Itoa(p.Value))
		}
	}
	must.NotEq(t, "", addr, must.Sprint("the alloc has no http port"))
	var body string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		resp, err := http.Get("http://" + addr + "/index.html")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		body = string(b)
		return err
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
	must.Eq(t, "hello-"+alloc.ID+" port 80\n", body)

	// A port label the group does not declare fails the task, named.
	bad := execJob("dk-ports-bad", dockerTask("main", "true", 32), 0)
	delete(bad.TaskGroups[0].Tasks[0].Config, "network_mode")
	bad.TaskGroups[0].Tasks[0].Config["ports"] = []string{"admin"}
	register(t, c, bad)
	failed := onlyAlloc(t, c, "dk-ports-bad", isTerminal)
	must.Eq(t, "failed", failed.ClientStatus)
	must.True(t, hasEvent(failed, "Failed Validation", `port label "admin" is not declared in the group's network`),
		must.Sprintf("%s", eventsText(failed)))
}
