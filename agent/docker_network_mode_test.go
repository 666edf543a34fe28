package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
)

// network_mode = "container:db-${NOMAD_ALLOC_ID}", as Nomad users write
// it, joins the network of the alloc's other task: the main task reaches
// the sidecar's httpd on their shared loopback, which no other container
// has.
func TestDockerDriver_NetworkModeContainer(t *testing.T) {
	e := dockertest.StartT(t)
	t.Setenv("DOCKER_HOST", e.Host)
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	waitDockerHealthy(t, c, 1)

	db := dockerTask("db", `echo "db-$NOMAD_ALLOC_ID" > /local/index.html; exec httpd -f -p 127.0.0.1:8080 -h /local`, 32)
	db.Lifecycle = &api.TaskLifecycle{Hook: "prestart", Sidecar: true}
	main := dockerTask("main", `for i in $(seq 100); do wget -q -O - http://127.0.0.1:8080/index.html && exit 0; sleep 0.1; done; exit 1`, 32)
	main.Config["network_mode"] = "container:db-${NOMAD_ALLOC_ID}"
	job := execJob("dk-netmode", main, 0)
	job.TaskGroups[0].AddTask(db)
	register(t, c, job)
	alloc := onlyAlloc(t, c, "dk-netmode", isTerminal)
	must.Eq(t, "complete", alloc.ClientStatus, must.Sprint(eventsText(alloc)))
	must.Eq(t, "db-"+alloc.ID+"\n", taskLog(t, a, alloc.ID, "main"))

	// A task that names a container that is not there fails, the name in
	// its event.
	lone := dockerTask("main", "true", 32)
	lone.Config["network_mode"] = "container:nope-${NOMAD_ALLOC_ID}"
	register(t, c, execJob("dk-netmode-missing", lone, 0))
	failed := onlyAlloc(t, c, "dk-netmode-missing", isTerminal)
	must.Eq(t, "failed", failed.ClientStatus)
	must.True(t, hasEvent(failed, "Driver Failure", "nope-"+failed.ID), must.Sprint(eventsText(failed)))
}
