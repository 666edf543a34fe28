package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// serviceJob is a service job whose group has a network port "http" and a
// nomad-provider service with an http check on it, and whose task "t" has
// a tcp-checked service on the same port.
func serviceJob() *Job {
	j := minimalStructJob(JobTypeService)
	tg := j.TaskGroups[0]
	tg.Networks = []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}}}}
	tg.Services = []*Service{{
		Name: "web", PortLabel: "http", Provider: ServiceProviderNomad,
		Checks: []*ServiceCheck{{Type: ServiceCheckHTTP, Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second}},
	}}
	tg.Tasks[0].Services = []*Service{{
		Name: "web-task", PortLabel: "http", Provider: ServiceProviderNomad,
		Checks: []*ServiceCheck{{Type: ServiceCheckTCP, Interval: time.Second, Timeout: time.Second}},
	}}
	return j
}

func TestValidateServices(t *testing.T) {
	const (
		group = `Task group "g", service "web"`
		task  = `Task group "g", task "t", service "web-task"`
		check = group + `, check "service: \"web\" check"`
	)
	gs := func(j *Job) *Service { return j.TaskGroups[0].Services[0] }
	gc := func(j *Job) *ServiceCheck { return gs(j).Checks[0] }
	ts := func(j *Job) *Service { return j.TaskGroups[0].Tasks[0].Services[0] }
	cases := []struct {
		name   string
		mutate func(j *Job)
		err    string // "" when the job is valid
	}{
		{"valid", func(*Job) {}, ""},
		{"consul default", func(j *Job) { gs(j).Provider = "" },
			group + `: provider "consul" is not supported by nomadq: Consul is not available; set provider = "nomad" to use Nomad's built-in service discovery`},
		{"unknown provider", func(j *Job) { gs(j).Provider = "etcd" }, group + `: provider "etcd" is not allowed: must be "nomad"`},
		{"bad name", func(j *Job) { gs(j).Name = "web_1" }, `Task group "g", service "web_1": name "web_1" is not allowed`},
		{"interpolated name", func(j *Job) { gs(j).Name = "web-${NOMAD_ALLOC_INDEX}" }, ""},
		{"duplicate in group", func(j *Job) {
			s := gs(j).Copy()
			s.Checks = nil
			j.TaskGroups[0].Services = append(j.TaskGroups[0].Services, s)
		}, `Task group "g": service "web" on port "http" is defined more than once: services of a group must differ in name or port`},
		{"same name other port", func(j *Job) {
			j.TaskGroups[0].Networks[0].DynamicPorts = append(j.TaskGroups[0].Networks[0].DynamicPorts, Port{Label: "admin"})
			j.TaskGroups[0].Services = append(j.TaskGroups[0].Services, &Service{Name: "web", PortLabel: "admin", Provider: ServiceProviderNomad})
		}, ""},
		{"missing port label", func(j *Job) { gs(j).PortLabel = "nope" }, group + `: port "nope" does not exist: must be a port label of the group's network`},
		{"numeric port without driver", func(j *Job) { ts(j).PortLabel = "8080"; ts(j).Checks = nil }, task + `: port 8080 is not allowed: a task service's numeric port needs address_mode = "driver"`},
		{"numeric port with driver", func(j *Job) { ts(j).PortLabel = "8080"; ts(j).AddressMode = "driver"; ts(j).Checks = nil }, ""},
		{"numeric group port", func(j *Job) { gs(j).PortLabel = "8080" }, ""},
		{"numeric port out of range", func(j *Job) { gs(j).PortLabel = "70000"; gs(j).Checks = nil }, group + `: port 70000 is not allowed: must be between 1 and 65535`},
		{"task check on service's numeric port", func(j *Job) { ts(j).PortLabel = "8080"; ts(j).AddressMode = "driver" }, task + `, check "service: \"web-task\" check": port 8080 (the service's) is not allowed for a task service's check`},
		{"bad address mode", func(j *Job) { gs(j).AddressMode = "ipv9" }, group + `: address_mode "ipv9" is not allowed: must be one of "auto", "host", "alloc" or "driver"`},
		{"driver in group", func(j *Job) { gs(j).AddressMode = "driver" }, group + `: address_mode "driver" is not allowed in a group service`},
		{"alloc in task", func(j *Job) { ts(j).AddressMode = "alloc" }, task + `: address_mode "alloc" is not allowed in a task service`},
		{"address with host mode", func(j *Job) { gs(j).AddressMode = "host"; gs(j).Address = "10.0.0.1" }, group + `: address "10.0.0.1" is not allowed with address_mode "host"`},
		{"grpc check", func(j *Job) { gc(j).Type = "grpc" }, check + `: type "grpc" is not supported by nomadq: grpc checks need Consul`},
		{"unknown check type", func(j *Job) { gc(j).Type = "docker" }, check + `: type "docker" is not allowed: must be one of "http", "tcp" or "script"`},
		{"http without path", func(j *Job) { gc(j).Path = "" }, check + `: path is missing: an http check needs a path`},
		{"absolute path", func(j *Job) { gc(j).Path = "http://x/health" }, check + `: path "http://x/health" is not allowed: must be a relative URL path`},
		{"bad method", func(j *Job) { gc(j).Method = "FETCH" }, check + `: method "FETCH" is not allowed`},
		{"short interval", func(j *Job) { gc(j).Interval = 500 * time.Millisecond }, check + `: interval 500ms is not allowed: must be at least 1s`},
		{"no timeout", func(j *Job) { gc(j).Timeout = 0 }, check + `: timeout 0s is not allowed: must be at least 1s`},
		{"check port missing", func(j *Job) { gc(j).PortLabel = "admin" }, check + `: port "admin" does not exist: must be a port label of the group's network`},
		{"check without any port", func(j *Job) { gs(j).PortLabel = "" }, check + `: port is missing: a http check needs a port, on the check or its service`},
		{"script without command", func(j *Job) { gc(j).Type = "script"; gc(j).TaskName = "t" }, check + `: command is missing: a script check needs a command`},
		{"group script without task", func(j *Job) { gc(j).Type = "script"; gc(j).Command = "/bin/true"; gc(j).TaskName = "" },
			check + `: task is missing: a script check of a group service runs in a task`},
		{"group script with task", func(j *Job) { gc(j).Type = "script"; gc(j).Command = "/bin/true"; gc(j).TaskName = "t" }, ""},
		{"check on unknown task", func(j *Job) { gc(j).TaskName = "other" }, check + `: task "other" does not exist in the group`},
		{"negative check_restart", func(j *Job) { gc(j).CheckRestart = &CheckRestart{Limit: -1} }, check + `: check_restart limit -1 is not allowed: must be at least 0`},
		{"on_update ignore_warnings", func(j *Job) { gc(j).OnUpdate = "ignore_warnings" }, check + `: on_update "ignore_warnings" is not supported by nomadq`},
		{"bad on_update", func(j *Job) { gs(j).OnUpdate = "never" }, group + `: on_update "never" is not allowed`},
		{"check driver address", func(j *Job) { gc(j).AddressMode = "driver" }, check + `: address_mode "driver" is not supported by nomadq`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := serviceJob()
			tc.mutate(j)
			j.Canonicalize()
			err := j.Validate()
			if tc.err == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.err)
		})
	}
}

func TestCanonicalize_ServiceChecks(t *testing.T) {
	j := serviceJob()
	j.TaskGroups[0].Services[0].OnUpdate = ServiceOnUpdateIgnore
	j.Canonicalize()
	gc := j.TaskGroups[0].Services[0].Checks[0]
	must.Eq(t, `service: "web" check`, gc.Name)
	must.Eq(t, "", gc.TaskName, must.Sprint("a group service's check runs in no task unless it names one"))
	must.Eq(t, ServiceOnUpdateIgnore, gc.OnUpdate)

	ts := j.TaskGroups[0].Tasks[0].Services[0]
	must.Eq(t, "t", ts.TaskName)
	must.Eq(t, "t", ts.Checks[0].TaskName)
	must.Eq(t, ServiceOnUpdateHealthy, ts.Checks[0].OnUpdate)
}
