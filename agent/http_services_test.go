package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/jobspec"
	"github.com/nomadq/nomadq/structs"
)

// The service catalog through the official client: two running allocs of
// a job register an instance of "web" each over RPC, as their client
// does, and the api module's Services() reads, filters, picks and
// deletes them, within the token's namespaces; stopping the job removes
// what is left.
func TestServices_OfficialClient(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.ACL.Enabled = true })
	root := apiClient(t, a)
	tok, _, err := root.ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root.SetSecretID(tok.SecretID)

	job := api.NewServiceJob("web", "web", "global", 50)
	job.Datacenters = []string{"*"}
	tg := api.NewTaskGroup("web", 2)
	task := api.NewTask("t", "mock_driver")
	task.Config = map[string]any{"run_for": "1h"}
	task.Require(&api.Resources{CPU: new(20), MemoryMB: new(16)})
	tg.AddTask(task)
	job.AddTaskGroup(tg)
	_, _, err = root.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocs []*api.AllocationListStub
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _, err = root.Jobs().Allocations("web", false, nil)
		running := 0
		for _, al := range allocs {
			if al.ClientStatus == structs.AllocClientStatusRunning {
				running++
			}
		}
		return err == nil && running == 2
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))

	var regs []*structs.ServiceRegistration
	for i, al := range allocs {
		regs = append(regs, &structs.ServiceRegistration{
			ID:          fmt.Sprintf("_nomad-task-%s-group-web-web-http", al.ID),
			ServiceName: "web", Namespace: "default", NodeID: al.NodeID, Datacenter: "dc1", JobID: "web", AllocID: al.ID,
			Tags: []string{"v1", fmt.Sprintf("i%d", i)}, Address: "127.0.0.1", Port: 8000 + i,
		})
	}
	// A registration in another namespace, to be hidden from tokens that
	// may not read it.
	regs = append(regs, &structs.ServiceRegistration{
		ID: "_nomad-task-other", ServiceName: "db", Namespace: "other", NodeID: allocs[0].NodeID,
		JobID: "db", AllocID: structs.GenerateUUID(), Address: "127.0.0.1", Port: 5432,
	})
	req := &structs.ServiceRegistrationUpsertRequest{Services: regs}
	req.AuthToken = tok.SecretID
	must.NoError(t, a.rpc(structs.ServiceRegistrationUpsertRPCMethod, req, &structs.ServiceRegistrationUpsertResponse{}))

	list, meta, err := root.Services().List(nil)
	must.NoError(t, err)
	must.Positive(t, meta.LastIndex)
	must.Eq(t, []*api.ServiceRegistrationListStub{{Namespace: "default", Services: []*api.ServiceRegistrationStub{
		{ServiceName: "web", Tags: []string{"i0", "i1", "v1"}},
	}}}, list)
	list, _, err = root.Services().List(&api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)
	must.Len(t, 2, list)
	list, _, err = root.Services().List(&api.QueryOptions{Namespace: "*", Filter: `Namespace == "other"`})
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.Eq(t, "db", list[0].Services[0].ServiceName)

	web, meta, err := root.Services().Get("web", nil)
	must.NoError(t, err)
	must.Len(t, 2, web)
	byAlloc := map[string]*api.ServiceRegistration{}
	for _, s := range web {
		byAlloc[s.AllocID] = s
	}
	for _, r := range regs[:2] {
		got := byAlloc[r.AllocID]
		must.NotNil(t, got)
		must.Eq(t, r.ID, got.ID)
		must.Eq(t, r.Address, got.Address)
		must.Eq(t, r.Port, got.Port)
		must.Eq(t, r.NodeID, got.NodeID)
		must.Eq(t, "web", got.JobID)
		must.Eq(t, r.Tags, got.Tags)
	}

	filtered, _, err := root.Services().Get("web", &api.QueryOptions{Filter: "Port == 8001"})
	must.NoError(t, err)
	must.Len(t, 1, filtered)
	must.Eq(t, 8001, filtered[0].Port)
	tagged, _, err := root.Services().Get("web", &api.QueryOptions{Params: map[string]string{"tag": "i0"}})
	must.NoError(t, err)
	must.Len(t, 1, tagged)
	must.Eq(t, 8000, tagged[0].Port)
	chosen, _, err := root.Services().Get("web", &api.QueryOptions{Params: map[string]string{"choose": "1|my-alloc"}})
	must.NoError(t, err)
	must.Len(t, 1, chosen)
	again, _, err := root.Services().Get("web", &api.QueryOptions{Params: map[string]string{"choose": "1|my-alloc"}})
	must.NoError(t, err)
	must.Eq(t, chosen[0].ID, again[0].ID)
	_, _, err = root.Services().Get("web", &api.QueryOptions{Params: map[string]string{"choose": "one"}})
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "Parameter for choose must be in form '<number>|<key>'")
	_, _, err = root.Services().Get("web", &api.QueryOptions{Filter: "Nope =="})
	must.ErrorContains(t, err, "400")

	none, _, err := root.Services().Get("nothing-here", nil)
	must.NoError(t, err)
	must.NotNil(t, none)
	must.SliceEmpty(t, none, must.Sprint("an unknown service is an empty list, as in Nomad"))

	// A token that may read only namespace "other".
	other := tokenClient(t, a, root, "other-reader", `namespace "other" { policy = "read" }`)
	_, _, err = other.Services().Get("web", nil)
	must.ErrorContains(t, err, "403")
	_, _, err = other.Services().List(nil)
	must.ErrorContains(t, err, "403")
	list, _, err = other.Services().List(&api.QueryOptions{Namespace: "*"})
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.Eq(t, "other", list[0].Namespace)
	_, err = other.Services().Delete("web", regs[0].ID, nil)
	must.ErrorContains(t, err, "403")

	// A blocking read wakes on the delete.
	woke := make(chan []*api.ServiceRegistration, 1)
	go func() {
		got, _, _ := root.Services().Get("web", &api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 30 * time.Second})
		woke <- got
	}()
	_, err = root.Services().Delete("web", regs[0].ID, nil)
	must.NoError(t, err)
	select {
	case got := <-woke:
		must.Len(t, 1, got)
		must.Eq(t, regs[1].ID, got[0].ID)
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking read did not wake on the delete")
	}
	_, err = root.Services().Delete("web", regs[0].ID, nil)
	must.ErrorContains(t, err, "404")

	// Stopping the job stops its allocs, and their registrations go.
	_, _, err = root.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		web, _, err = root.Services().Get("web", nil)
		return err == nil && len(web) == 0
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
}

// A job file with nomad-provider services and checks is accepted as Nomad
// accepts it; the bad inputs the issue names are refused at validation
// with the block and field named.
func TestServices_JobFileValidation(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)
	parse := func(src string) *api.Job {
		t.Helper()
		j, err := jobspec.Parse("svc.nomad.hcl", strings.NewReader(src))
		must.NoError(t, err)
		return j
	}
	const tmpl = `
job "svc" {
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "svc-web"
      provider = "nomad"
      port     = "http"
      tags     = ["v1"]
      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
        check_restart {
          limit = 3
          grace = "30s"
        }
      }
      %s
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
      service {
        provider = "nomad"
        port     = "http"
        check {
          type     = "tcp"
          interval = "5s"
          timeout  = "1s"
        }
      }
    }
  }
}
`
	resp, _, err := c.Jobs().Validate(parse(fmt.Sprintf(tmpl, "")), nil)
	must.NoError(t, err)
	must.SliceEmpty(t, resp.ValidationErrors)
	_, _, err = c.Jobs().Register(parse(fmt.Sprintf(tmpl, "")), nil)
	must.NoError(t, err)
	stored, _, err := c.Jobs().Info("svc", nil)
	must.NoError(t, err)
	svc := stored.TaskGroups[0].Services[0]
	must.Eq(t, "nomad", svc.Provider)
	must.Len(t, 1, svc.Checks)
	must.Eq(t, 3, svc.Checks[0].CheckRestart.Limit)
	must.Eq(t, 30*time.Second, *svc.Checks[0].CheckRestart.Grace)
	taskSvc := stored.TaskGroups[0].Tasks[0].Services[0]
	must.Eq(t, "svc-g-t", taskSvc.Name)
	must.Eq(t, `service: "svc-g-t" check`, taskSvc.Checks[0].Name)
	must.Eq(t, "t", taskSvc.Checks[0].TaskName)

	cases := []struct {
		name  string
		extra string
		want  string
	}{
		{"check on a missing port", `check {
        type     = "tcp"
        port     = "admin"
        interval = "10s"
        timeout  = "2s"
      }`, `Task group "g", service "svc-web", check "service: \"svc-web\" check": port "admin" does not exist: must be a port label of the group's network`},
		{"grpc check", `check {
        name     = "rpc"
        type     = "grpc"
        interval = "10s"
        timeout  = "2s"
      }`, `Task group "g", service "svc-web", check "rpc": type "grpc" is not supported by nomadq: grpc checks need Consul`},
		{"script check without command", `check {
        name     = "script"
        type     = "script"
        task     = "t"
        interval = "10s"
        timeout  = "2s"
      }`, `Task group "g", service "svc-web", check "script": command is missing: a script check needs a command`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, _, err := c.Jobs().Validate(parse(fmt.Sprintf(tmpl, tc.extra)), nil)
			must.NoError(t, err)
			must.SliceNotEmpty(t, resp.ValidationErrors)
			must.StrContains(t, strings.Join(resp.ValidationErrors, "\n"), tc.want)
		})
	}

	dup := strings.Replace(fmt.Sprintf(tmpl, ""), `    task "t" {`, `    service {
      name     = "svc-web"
      provider = "nomad"
      port     = "http"
    }
    task "t" {`, 1)
	_, _, err = c.Jobs().Register(parse(dup), nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, `service "svc-web" on port "http" is defined more than once`)

	consul := strings.Replace(fmt.Sprintf(tmpl, ""), `      name     = "svc-web"
      provider = "nomad"`, `      name     = "svc-web"`, 1)
	_, _, err = c.Jobs().Register(parse(consul), nil)
	must.ErrorContains(t, err, `service "svc-web": provider "consul" is not supported by nomadq: Consul is not available; set provider = "nomad"`)
}
