package apiconv

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestConvert_WorkloadIdentities(t *testing.T) {
	const where = `job "j" group "g" task "t": `
	cases := []struct {
		name string
		set  func(*api.Task)
		want string // "" when accepted
	}{
		{"no identity", func(*api.Task) {}, ""},
		{"env and file", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{Env: true, File: true} }, ""},
		{"default name and audience", func(t *api.Task) {
			t.Identity = &api.WorkloadIdentity{Name: "default", Audience: []string{structs.IdentityDefaultAud}, Env: true}
		}, ""},
		{"unnamed entry of Identities", func(t *api.Task) { t.Identities = []*api.WorkloadIdentity{{File: true}} }, ""},
		{"named identity", func(t *api.Task) { t.Identities = []*api.WorkloadIdentity{{Name: "consul_default"}} },
			where + `field "Identities[0].Name" = "consul_default" is not supported by nomadq: only "default" is accepted`},
		{"two audiences", func(t *api.Task) {
			t.Identity = &api.WorkloadIdentity{Audience: []string{structs.IdentityDefaultAud, "other"}}
		}, `field "Identity.Audience" = ["nomadproject.io" "other"] is not supported by nomadq`},
		{"change_signal", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{ChangeSignal: "SIGHUP"} }, where + `field "Identity.ChangeSignal" is not supported by nomadq`},
		{"service_name", func(t *api.Task) { t.Identity = &api.WorkloadIdentity{ServiceName: "web"} }, `field "Identity.ServiceName" is not supported by nomadq`},
		{"ttl in Identities", func(t *api.Task) { t.Identities = []*api.WorkloadIdentity{{TTL: time.Minute}} }, `field "Identities[0].TTL" is not supported by nomadq`},
		{"two default identities", func(t *api.Task) {
			t.Identity = &api.WorkloadIdentity{Env: true}
			t.Identities = []*api.WorkloadIdentity{{File: true}}
		}, where + `2 default identity blocks`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := api.NewBatchJob("j", "j", "global", 50)
			tg := api.NewTaskGroup("g", 1)
			task := api.NewTask("t", "raw_exec")
			tc.set(task)
			tg.AddTask(task)
			job.AddTaskGroup(tg)
			sj, _, err := Convert(job)
			if tc.want == "" {
				must.NoError(t, err)
				got := sj.TaskGroups[0].Tasks[0].Identity
				if task.Identity == nil && len(task.Identities) == 0 {
					must.Nil(t, got)
				} else {
					must.NotNil(t, got)
					must.Eq(t, []string{structs.IdentityDefaultAud}, got.Audience)
				}
				return
			}
			must.ErrorContains(t, err, tc.want)
		})
	}
}
