package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// httpPut sends body as JSON and returns the status, the Content-Type and
// the body of the answer. A request that takes more than 30 seconds fails
// the test instead of hanging it.
func httpPut(t *testing.T, url string, body any) (int, string, string) {
	t.Helper()
	buf, err := json.Marshal(body)
	must.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(buf))
	must.NoError(t, err)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(out)
}

// A job that sets a field nomadq would not act on is refused at register,
// plan and validate with a plain-text 400 naming the field, and nothing is
// stored.
func TestJobRefusals_HTTP(t *testing.T) {
	a := NewTestAgent(t, nil)
	base := a.HTTPAddr()
	const (
		job   = `job "refused": `
		group = `job "refused" group "g": `
		task  = `job "refused" group "g" task "t": `
	)
	cases := []struct {
		name string
		set  func(j *api.Job, tg *api.TaskGroup, t *api.Task)
		want string
	}{
		{"vault", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) { t.Vault = &api.Vault{Role: "app"} }, task + `field "Vault" is not supported by nomadq`},
		{"task consul", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) { t.Consul = &api.Consul{Namespace: "a"} }, task + `field "Consul" is not supported by nomadq`},
		{"group consul", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) { tg.Consul = &api.Consul{} }, group + `field "Consul" is not supported by nomadq`},
		{"consul namespace", func(j *api.Job, _ *api.TaskGroup, _ *api.Task) { j.ConsulNamespace = new("ns") }, job + `field "ConsulNamespace" is not supported by nomadq`},
		{"vault namespace", func(j *api.Job, _ *api.TaskGroup, _ *api.Task) { j.VaultNamespace = new("ns") }, job + `field "VaultNamespace" is not supported by nomadq`},
		{"service tagged_addresses", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Services = []*api.Service{{Name: "web", Provider: "nomad", TaggedAddresses: map[string]string{"lan": "10.0.0.1"}}}
		}, group + `field "Services[0].TaggedAddresses" is not supported by nomadq`},
		{"connect", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Services = []*api.Service{{Name: "web", Provider: "nomad", Connect: &api.ConsulConnect{SidecarService: &api.ConsulSidecarService{}}}}
		}, group + `field "Services[0].Connect" is not supported by nomadq`},
		{"consul service", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Services = []*api.Service{{Name: "web"}}
		}, `Task group "g", service "web": provider "consul" is not supported by nomadq: Consul is not available; set provider = "nomad" to use Nomad's built-in service discovery`},
		{"csi volume", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "csi", Source: "ebs"}}
		}, group + `field "Volumes[\"data\"].Type" = "csi" is not supported by nomadq: only "host" is accepted`},
		{"volume mount propagation", func(_ *api.Job, tg *api.TaskGroup, t *api.Task) {
			tg.Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}}
			t.VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("/data"), PropagationMode: new("bidirectional")}}
		}, task + `field "VolumeMounts[0].PropagationMode" = "bidirectional" is not supported by nomadq: only "private" is accepted`},
		{"port host_network", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "db", HostNetwork: "public"}}}}
		}, group + `field "Networks[0].DynamicPorts[0].HostNetwork" is not supported by nomadq`},
		{"device", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.Resources.Devices = []*api.RequestedDevice{{Name: "nvidia/gpu"}}
		}, task + `field "Resources.Devices" is not supported by nomadq`},
		{"numa", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.Resources.NUMA = &api.NUMAResource{Affinity: "require"}
		}, task + `field "Resources.NUMA" is not supported by nomadq`},
		{"named identity", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.Identities = []*api.WorkloadIdentity{{Name: "vault_default"}}
		}, task + `field "Identities[0].Name" = "vault_default" is not supported by nomadq: only "default" is accepted`},
		{"csi_plugin", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.CSIPluginConfig = &api.TaskCSIPluginConfig{ID: "p", Type: api.CSIPluginTypeNode, MountDir: "/csi"}
		}, task + `field "CSIPluginConfig" is not supported by nomadq`},
		{"task scaling", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.ScalingPolicies = []*api.ScalingPolicy{{Type: "vertical_cpu", Max: new(int64(500))}}
		}, task + `field "ScalingPolicies" is not supported by nomadq`},
		{"network mbits", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Networks = []*api.NetworkResource{{Mode: "bridge", MBits: new(10)}}
		}, group + `field "Networks[0].MBits" is not supported by nomadq`},
		{"port host_network", func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) {
			tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "db", To: 6379, HostNetwork: "public"}}}}
		}, group + `field "Networks[0].DynamicPorts[0].HostNetwork" is not supported by nomadq`},
		{"template wait", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.Templates = []*api.Template{{EmbeddedTmpl: new("x"), DestPath: new("local/x"), Wait: &api.WaitConfig{Min: new(time.Second)}}}
		}, task + `field "Templates[0].Wait" is not supported by nomadq`},
		{"template change script on first render", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.Templates = []*api.Template{{EmbeddedTmpl: new("x"), DestPath: new("local/x"), ChangeMode: new("script"),
				ChangeScript: &api.ChangeScript{Command: new("/bin/true"), RunOnFirstRender: new(true)}}}
		}, task + `field "Templates[0].ChangeScript.RunOnFirstRender" is not supported by nomadq`},
		{"multiregion", func(j *api.Job, _ *api.TaskGroup, _ *api.Task) { j.Multiregion = &api.Multiregion{} }, job + `field "Multiregion" is not supported by nomadq`},
		{"task-level network", func(_ *api.Job, _ *api.TaskGroup, t *api.Task) {
			t.Resources.Networks = []*api.NetworkResource{{MBits: new(10)}}
		}, task + `field "Resources.Networks" is not supported by nomadq`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := mockJob("refused", 1)
			tc.set(j, j.TaskGroups[0], j.TaskGroups[0].Tasks[0])
			want := "Job validation failed: " + tc.want

			code, ctype, body := httpPut(t, base+"/v1/jobs", api.JobRegisterRequest{Job: j})
			must.Eq(t, http.StatusBadRequest, code)
			must.StrHasPrefix(t, "text/plain", ctype)
			must.Eq(t, want, body)

			code, _, body = httpPut(t, base+"/v1/job/refused/plan", api.JobPlanRequest{Job: j})
			must.Eq(t, http.StatusBadRequest, code)
			must.Eq(t, want, body)

			code, _, body = httpPut(t, base+"/v1/validate/job", api.JobValidateRequest{Job: j})
			must.Eq(t, http.StatusOK, code)
			var v api.JobValidateResponse
			must.NoError(t, json.Unmarshal([]byte(body), &v))
			must.Eq(t, []string{tc.want}, v.ValidationErrors)
		})
	}
	c := apiClient(t, a)
	jobs, _, err := c.Jobs().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jobs)
}

// update is accepted with a warning in every answer; migrate, which
// node drains honour, is accepted without one.
func TestJobRefusals_RolloutWarnings(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	j := mockJob("svc", 1)
	j.Type = new("service")
	j.Update = &api.UpdateStrategy{MaxParallel: new(2), Canary: new(1)}
	j.TaskGroups[0].Migrate = &api.MigrateStrategy{MaxParallel: new(1)}
	const (
		update  = `job "svc": update block: rolling updates and canaries are not implemented by nomadq; an update replaces every alloc at once`
		migrate = `migrate block`
	)

	v, _, err := c.Jobs().Validate(j, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, v.ValidationErrors)
	must.StrContains(t, v.Warnings, update)
	must.StrNotContains(t, v.Warnings, migrate)

	p, _, err := c.Jobs().Plan(j, false, nil)
	must.NoError(t, err)
	must.StrContains(t, p.Warnings, update)
	must.StrNotContains(t, p.Warnings, migrate)

	r, _, err := c.Jobs().Register(j, nil)
	must.NoError(t, err)
	must.Eq(t, update, r.Warnings)
}

// A job read back from the server (nomad job inspect) is accepted when
// submitted again: what the server stores and answers is nothing Check
// refuses.
func TestJobRefusals_StoredJobResubmits(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	files, err := filepath.Glob("../examples/*.nomad.hcl")
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			job := parseExample(t, filepath.Base(f))
			_, _, err := c.Jobs().Register(job, nil)
			must.NoError(t, err)
			stored, _, err := c.Jobs().Info(*job.ID, nil)
			must.NoError(t, err)
			_, _, err = c.Jobs().Register(stored, nil)
			must.NoError(t, err)
		})
	}
}
