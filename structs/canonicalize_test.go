package structs

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// minimalApiJob is the smallest job a user can write: one group, one task.
func minimalApiJob(typ string) *api.Job {
	return &api.Job{
		ID:          new("j"),
		Type:        new(typ),
		Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name: new("g"),
			Tasks: []*api.Task{{
				Name:   "t",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/true"},
			}},
		}},
	}
}

// minimalStructJob is minimalApiJob built directly in the internal model.
func minimalStructJob(typ string) *Job {
	return &Job{
		ID:          "j",
		Type:        typ,
		Datacenters: []string{"dc1"},
		TaskGroups: []*TaskGroup{{
			Name:  "g",
			Count: 1,
			Tasks: []*Task{{
				Name:   "t",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/true"},
			}},
		}},
	}
}

// serverPath is how the server turns a submitted job into a stored one.
func serverPath(aj *api.Job) *Job {
	aj.Canonicalize()
	j := ApiJobToStructJob(aj)
	j.Canonicalize()
	return j
}

func TestCanonicalize_Defaults(t *testing.T) {
	serviceRestart := &RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	batchRestart := &RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	serviceUpdate := UpdateStrategy{
		Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * time.Second,
		HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute,
	}
	cases := []struct {
		typ        string
		restart    *RestartPolicy
		reschedule *ReschedulePolicy
		update     UpdateStrategy
		migrate    *MigrateStrategy
	}{
		{
			typ:        JobTypeService,
			restart:    serviceRestart,
			reschedule: &ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: RescheduleDelayExponential, MaxDelay: time.Hour, Unlimited: true},
			update:     serviceUpdate,
			migrate:    &MigrateStrategy{MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute},
		},
		{
			typ:        JobTypeBatch,
			restart:    batchRestart,
			reschedule: &ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: RescheduleDelayConstant},
		},
		{
			typ:     JobTypeSystem,
			restart: serviceRestart,
			update:  serviceUpdate,
		},
		{
			typ:     JobTypeSysBatch,
			restart: batchRestart,
		},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			j := serverPath(minimalApiJob(tc.typ))

			must.Eq(t, DefaultNamespace, j.Namespace)
			must.Eq(t, DefaultRegion, j.Region)
			must.Eq(t, DefaultNodePool, j.NodePool)
			must.Eq(t, "j", j.Name)
			must.Eq(t, JobDefaultPriority, j.Priority)
			must.Eq(t, tc.update, j.Update)
			must.Nil(t, j.Meta)

			tg := j.TaskGroups[0]
			must.Eq(t, 1, tg.Count)
			must.Eq(t, tc.restart, tg.RestartPolicy)
			must.Eq(t, tc.reschedule, tg.ReschedulePolicy)
			must.Eq(t, tc.migrate, tg.Migrate)
			must.Eq(t, &EphemeralDisk{SizeMB: 300}, tg.EphemeralDisk)
			must.Nil(t, tg.MaxRunDuration)
			must.Nil(t, tg.Meta)

			task := tg.Tasks[0]
			must.Eq(t, 5*time.Second, task.KillTimeout)
			must.Eq(t, &LogConfig{MaxFiles: 10, MaxFileSizeMB: 10}, task.LogConfig)
			must.Eq(t, &Resources{CPU: 100, MemoryMB: 300}, task.Resources)
			must.Eq(t, tc.restart, task.RestartPolicy)
			must.Nil(t, task.Env)
			must.Nil(t, task.Meta)

			must.NoError(t, j.Validate())
		})
	}
}

// A job registered through the official client and the same job built
// directly in the internal model end up identical after canonicalization.
func TestCanonicalize_ApiPathMatchesDirect(t *testing.T) {
	for _, typ := range []string{JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch} {
		t.Run(typ, func(t *testing.T) {
			viaAPI := serverPath(minimalApiJob(typ))
			direct := minimalStructJob(typ)
			direct.Canonicalize()
			must.Eq(t, viaAPI, direct)
		})
	}
}

func TestCanonicalize_Idempotent(t *testing.T) {
	for name, aj := range map[string]*api.Job{
		"service":  apiServiceJob(),
		"batch":    apiBatchJob(),
		"sysbatch": apiParameterizedJob(),
		"system":   apiSystemJob(),
	} {
		t.Run(name, func(t *testing.T) {
			j := serverPath(aj)
			again := j.Copy()
			again.Canonicalize()
			must.Eq(t, j, again)
			must.NoError(t, j.Validate())
		})
	}
}

// Canonicalize keeps what the user set, and only fills what api.Job's
// Canonicalize leaves empty.
func TestCanonicalize_KeepsUserValues(t *testing.T) {
	aj := apiServiceJob()
	aj.Canonicalize()
	before := ApiJobToStructJob(aj)
	after := before.Copy()
	after.Canonicalize()

	must.Eq(t, "edge", after.NodePool)
	must.Eq(t, 70, after.Priority)
	// Converting back gives the canonicalized api job again: nothing the
	// official client set was changed.
	must.Eq(t, aj, StructJobToApiJob(after))

	// Only the server-side defaults differ when api left them empty.
	b := apiBatchJob()
	b.Canonicalize()
	sj := ApiJobToStructJob(b)
	must.Eq(t, "", sj.NodePool)
	sj.Canonicalize()
	must.Eq(t, DefaultNodePool, sj.NodePool)

	p := apiParameterizedJob()
	p.ParameterizedJob.Payload = ""
	must.Eq(t, DispatchPayloadOptional, serverPath(p).ParameterizedJob.Payload)
}

func TestCanonicalize_Direct(t *testing.T) {
	j := &Job{
		ID:   "periodic",
		Type: JobTypeBatch,
		Periodic: &PeriodicConfig{
			Enabled: true,
			Spec:    "@daily",
			Specs:   []string{},
		},
		Reschedule: &ReschedulePolicy{Attempts: 7, Interval: time.Hour, Delay: 10 * time.Second, DelayFunction: RescheduleDelayConstant},
		Constraints: []*Constraint{
			{LTarget: "${attr.kernel.name}", RTarget: "linux"},
		},
		Affinities: []*Affinity{{LTarget: "${node.class}", RTarget: "fast"}},
		Spreads:    []*Spread{{Attribute: "${node.datacenter}"}},
		TaskGroups: []*TaskGroup{{
			Name:          "g",
			RestartPolicy: &RestartPolicy{Attempts: 1, Interval: time.Minute, Delay: time.Second, Mode: RestartPolicyModeDelay},
			Services:      []*Service{{PortLabel: "http"}},
			Tasks: []*Task{{
				Name:      "t",
				Services:  []*Service{{PortLabel: "admin", Provider: "nomad"}},
				Artifacts: []*TaskArtifact{{GetterSource: "https://x/y/app.bin", GetterMode: "file"}, {GetterSource: "https://x/dir"}},
				Templates: []*Template{{DestPath: "local/a", ChangeMode: "signal"}},
			}},
		}},
	}
	j.Canonicalize()

	must.Eq(t, &PeriodicConfig{Enabled: true, Spec: "@daily", SpecType: PeriodicSpecCron, TimeZone: "UTC"}, j.Periodic)
	must.Eq(t, "=", j.Constraints[0].Operand)
	must.Eq(t, &Affinity{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: 50}, j.Affinities[0])
	must.Eq(t, 50, j.Spreads[0].Weight)

	tg := j.TaskGroups[0]
	// The job-level reschedule policy is inherited by a group without one.
	must.Eq(t, j.Reschedule, tg.ReschedulePolicy)
	must.False(t, j.Reschedule == tg.ReschedulePolicy)
	// The group restart policy is copied to the task.
	task := tg.Tasks[0]
	must.Eq(t, tg.RestartPolicy, task.RestartPolicy)
	must.False(t, tg.RestartPolicy == task.RestartPolicy)

	must.Eq(t, &Service{Name: "periodic-g", PortLabel: "http", Provider: "consul", AddressMode: "auto", OnUpdate: "require_healthy", Cluster: "default"}, tg.Services[0])
	must.Eq(t, "periodic-g-t", task.Services[0].Name)
	must.Eq(t, "nomad", task.Services[0].Provider)
	must.Eq(t, "local/app.bin", task.Artifacts[0].RelativeDest)
	must.Eq(t, "local/", task.Artifacts[1].RelativeDest)
	must.Eq(t, "any", task.Artifacts[1].GetterMode)
	must.Eq(t, &Template{DestPath: "local/a", ChangeMode: "signal", ChangeSignal: "SIGHUP", Perms: "0644", LeftDelim: "{{", RightDelim: "}}"}, task.Templates[0])
}

// A job that names no datacenter may run in any, as in Nomad 1.5+.
func TestCanonicalize_NoDatacentersMeansAny(t *testing.T) {
	aj := minimalApiJob(JobTypeBatch)
	aj.Datacenters = nil
	j := serverPath(aj)
	must.Eq(t, []string{"*"}, j.Datacenters)
	must.NoError(t, j.Validate())
}
