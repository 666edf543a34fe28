package apiconv

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
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

// serverPath is how the server turns a submitted job into a stored one.
func serverPath(aj *api.Job) *structs.Job {
	aj.Canonicalize()
	j := Job(aj)
	j.Canonicalize()
	return j
}

func TestCanonicalize_Defaults(t *testing.T) {
	serviceRestart := &structs.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}
	batchRestart := &structs.RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}
	serviceUpdate := structs.UpdateStrategy{
		Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * time.Second,
		HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute,
	}
	cases := []struct {
		typ        string
		restart    *structs.RestartPolicy
		reschedule *structs.ReschedulePolicy
		update     structs.UpdateStrategy
		migrate    *structs.MigrateStrategy
	}{
		{
			typ:        structs.JobTypeService,
			restart:    serviceRestart,
			reschedule: &structs.ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: structs.RescheduleDelayExponential, MaxDelay: time.Hour, Unlimited: true},
			update:     serviceUpdate,
			migrate:    &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute},
		},
		{
			typ:        structs.JobTypeBatch,
			restart:    batchRestart,
			reschedule: &structs.ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: structs.RescheduleDelayConstant},
		},
		{
			typ:     structs.JobTypeSystem,
			restart: serviceRestart,
			update:  serviceUpdate,
		},
		{
			typ:     structs.JobTypeSysBatch,
			restart: batchRestart,
		},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			j := serverPath(minimalApiJob(tc.typ))

			must.Eq(t, structs.DefaultNamespace, j.Namespace)
			must.Eq(t, structs.DefaultRegion, j.Region)
			must.Eq(t, structs.DefaultNodePool, j.NodePool)
			must.Eq(t, "j", j.Name)
			must.Eq(t, structs.JobDefaultPriority, j.Priority)
			must.Eq(t, tc.update, j.Update)
			must.Nil(t, j.Meta)

			tg := j.TaskGroups[0]
			must.Eq(t, 1, tg.Count)
			must.Eq(t, tc.restart, tg.RestartPolicy)
			must.Eq(t, tc.reschedule, tg.ReschedulePolicy)
			must.Eq(t, tc.migrate, tg.Migrate)
			must.Eq(t, &structs.EphemeralDisk{SizeMB: 300}, tg.EphemeralDisk)
			must.Nil(t, tg.MaxRunDuration)
			must.Nil(t, tg.Meta)

			task := tg.Tasks[0]
			must.Eq(t, 5*time.Second, task.KillTimeout)
			must.Eq(t, &structs.LogConfig{MaxFiles: 10, MaxFileSizeMB: 10}, task.LogConfig)
			must.Eq(t, &structs.Resources{CPU: 100, MemoryMB: 300}, task.Resources)
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
	for _, typ := range []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch} {
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
			must.NoError(t, validatable(j.Copy()).Validate())
		})
	}
}

// validatable clears the template setting the fixtures set so that every
// api field is covered, but that validation refuses because it cannot take
// effect (structs' TestValidate covers the refusal).
func validatable(j *structs.Job) *structs.Job {
	for _, tg := range j.TaskGroups {
		for _, task := range tg.Tasks {
			for _, tmpl := range task.Templates {
				if tmpl.Envvars && tmpl.ChangeMode == structs.TemplateChangeModeSignal {
					tmpl.ChangeMode = structs.TemplateChangeModeRestart
				}
			}
		}
	}
	return j
}

// Canonicalize keeps what the user set, and only fills what api.Job's
// Canonicalize leaves empty.
func TestCanonicalize_KeepsUserValues(t *testing.T) {
	aj := apiServiceJob()
	aj.Canonicalize()
	before := Job(aj)
	after := before.Copy()
	after.Canonicalize()

	must.Eq(t, "edge", after.NodePool)
	must.Eq(t, 70, after.Priority)
	// Converting back gives the canonicalized api job again: nothing the
	// official client set was changed.
	must.Eq(t, aj, jobToAPI(after))

	// Only the server-side defaults differ when api left them empty.
	b := apiBatchJob()
	b.Canonicalize()
	sj := Job(b)
	must.Eq(t, "", sj.NodePool)
	sj.Canonicalize()
	must.Eq(t, structs.DefaultNodePool, sj.NodePool)

	p := apiParameterizedJob()
	p.ParameterizedJob.Payload = ""
	must.Eq(t, structs.DispatchPayloadOptional, serverPath(p).ParameterizedJob.Payload)
}

// A job that names no datacenter may run in any, as in Nomad 1.5+.
func TestCanonicalize_NoDatacentersMeansAny(t *testing.T) {
	aj := minimalApiJob(structs.JobTypeBatch)
	aj.Datacenters = nil
	j := serverPath(aj)
	must.Eq(t, []string{"*"}, j.Datacenters)
	must.NoError(t, j.Validate())
}

// minimalStructJob is minimalApiJob built directly in the internal model.
func minimalStructJob(typ string) *structs.Job {
	return &structs.Job{
		ID:          "j",
		Type:        typ,
		Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name:  "g",
			Count: 1,
			Tasks: []*structs.Task{{
				Name:   "t",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/true"},
			}},
		}},
	}
}

// Every fixture is a job the server accepts once converted.
func TestCanonicalize_FixturesValidate(t *testing.T) {
	for name, aj := range map[string]*api.Job{
		"dispatched child": apiDispatchedChild(),
		"cron":             apiCronJob(),
	} {
		t.Run(name, func(t *testing.T) {
			must.NoError(t, serverPath(aj).Validate())
		})
	}
}
