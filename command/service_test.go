package command

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

func TestServiceCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "service", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "No service registrations found\n", out)

	reg := func(id, name, ns string, port int, tags ...string) *structs.ServiceRegistration {
		return &structs.ServiceRegistration{
			ID: id, ServiceName: name, Namespace: ns, NodeID: "4f5e6d7c-0000-0000-0000-000000000001", Datacenter: "dc1",
			JobID: "job-" + name, AllocID: "9a8b7c6d-0000-0000-0000-00000000000" + id[len(id)-1:], Tags: tags,
			Address: "10.0.0.5", Port: port,
		}
	}
	req := &structs.ServiceRegistrationUpsertRequest{Services: []*structs.ServiceRegistration{
		reg("_nomad-task-1", "web", "default", 8080, "v1", "http"),
		reg("_nomad-task-2", "web", "default", 8081, "v1"),
		reg("_nomad-task-3", "webhook", "default", 9000),
		reg("_nomad-task-4", "db", "other", 5432, "primary"),
	}}
	must.NoError(t, a.Server().RPC(structs.ServiceRegistrationUpsertRPCMethod, req, &structs.ServiceRegistrationUpsertResponse{}))

	code, out, errOut = cli(t, addr, "service", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Service Name  Tags\nweb           [http,v1]\nwebhook       []\n", out)

	code, out, errOut = cli(t, addr, "service", "list", "-namespace", "*")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Service Name  Namespace  Tags\nweb           default    [http,v1]\nwebhook       default    []\ndb            other      [primary]\n", out)

	code, out, errOut = cli(t, addr, "service", "list", "-t", "{{range .}}{{.Namespace}} {{end}}")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "default \n", out)

	for line, want := range map[string][]string{
		"nomad service info we":                {"web", "webhook"},
		"nomad service info webh":              {"webhook"},
		"nomad service delete w":               {"web", "webhook"},
		"nomad service delete web _nomad-task": {"_nomad-task-1", "_nomad-task-2"},
		"nomad service info nothing":           nil,
	} {
		must.Eq(t, want, completeLine(t, addr, line), must.Sprint(line))
	}

	// "web" is a prefix of "webhook" too: the exact name wins.
	code, out, errOut = cli(t, addr, "service", "info", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Job ID   Address        Tags       Node ID   Alloc ID\njob-web  10.0.0.5:8080  [v1,http]  4f5e6d7c  9a8b7c6d\njob-web  10.0.0.5:8081  [v1]       4f5e6d7c  9a8b7c6d\n", out)

	code, out, errOut = cli(t, addr, "service", "info", "-filter", "Port == 8081", "-verbose", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "ID           = _nomad-task-2\n")
	must.StrContains(t, out, "Address      = 10.0.0.5:8081\n")
	must.StrNotContains(t, out, "8080")

	code, out, errOut = cli(t, addr, "service", "info", "webh")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "job-webhook")

	code, _, errOut = cli(t, addr, "service", "info", "nope")
	must.Eq(t, 1, code)
	must.Eq(t, "Error listing service registrations: No service registrations with prefix \"nope\" found\n", errOut)

	code, out, errOut = cli(t, addr, "service", "delete", "web", "_nomad-task-1")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully deleted service registration\n", out)
	code, _, errOut = cli(t, addr, "service", "delete", "web", "_nomad-task-1")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error deleting service registration: Unexpected response code: 404")

	code, _, errOut = cli(t, addr, "service", "delete", "web")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "This command takes two arguments: <service_name> and <service_id>")
}
