package structs

import (
	"reflect"
	"sort"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestConvert_FixturesCoverEveryField guards the round-trip tests: every
// field of every type reachable from Job must be set (non-zero) in at least
// one fixture, so a field added to the model but forgotten in convert.go
// makes TestConvert_ApiRoundTrip fail instead of passing unnoticed.
func TestConvert_FixturesCoverEveryField(t *testing.T) {
	seen := make(map[string]bool)
	for _, f := range []func() *api.Job{apiServiceJob, apiBatchJob, apiParameterizedJob, apiDispatchedChild, apiSystemJob, apiCronJob} {
		aj := f()
		aj.Canonicalize()
		markSet(reflect.ValueOf(ApiJobToStructJob(aj)), seen)
	}

	// Fields no jobspec sets and api.Job.Canonicalize leaves zero.
	allowed := map[string]bool{
		"Job.StatusDescription": true,
		"Service.Kind":          true, // a Consul service kind; we carry it only
	}
	var missing []string
	for _, field := range allFields(reflect.TypeFor[Job](), make(map[reflect.Type]bool)) {
		if !seen[field] && !allowed[field] {
			missing = append(missing, field)
		}
	}
	sort.Strings(missing)
	must.SliceEmpty(t, missing, must.Sprintf("fields no fixture sets: %v", missing))
}

func markSet(v reflect.Value, seen map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			markSet(v.Elem(), seen)
		}
	case reflect.Slice:
		for i := range v.Len() {
			markSet(v.Index(i), seen)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			markSet(it.Value(), seen)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := v.Field(i)
			if !f.IsZero() {
				seen[t.Name()+"."+t.Field(i).Name] = true
			}
			markSet(f, seen)
		}
	}
}

func allFields(t reflect.Type, visited map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[Job]().PkgPath() || visited[t] {
		return nil
	}
	visited[t] = true
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		out = append(out, t.Name()+"."+f.Name)
		out = append(out, allFields(f.Type, visited)...)
	}
	return out
}

// TestConvert_ApiFieldsAccountedFor fails when the api module gains a
// field: each field of the api types must exist on our type of the same
// name, or be in the dropped list documented on ApiJobToStructJob.
func TestConvert_ApiFieldsAccountedFor(t *testing.T) {
	dropped := map[string]bool{
		"Job.Multiregion": true, "Job.UI": true, "Job.ConsulNamespace": true, "Job.VaultNamespace": true,
		"Job.NomadTokenID": true, "Job.VersionTag": true,
		"TaskGroup.Volumes": true, "TaskGroup.Disconnect": true, "TaskGroup.StopAfterClientDisconnect": true,
		"TaskGroup.MaxClientDisconnect": true, "TaskGroup.PreventRescheduleOnLost": true, "TaskGroup.Scaling": true,
		"TaskGroup.Consul": true,
		"Task.Vault":       true, "Task.Consul": true, "Task.VolumeMounts": true, "Task.CSIPluginConfig": true,
		"Task.ScalingPolicies": true, "Task.Secrets": true, "Task.Identity": true, "Task.Identities": true,
		"Task.Actions": true, "Task.Schedule": true,
		"Resources.Devices": true, "Resources.NUMA": true, "Resources.SecretsMB": true, "Resources.IOPS": true,
		"Service.Checks": true, "Service.CheckRestart": true, "Service.Connect": true, "Service.Identity": true,
		"Service.Weights":     true,
		"Template.VaultGrace": true,
		"LogConfig.Enabled":   true,
	}
	pairs := []struct{ api, ours reflect.Type }{
		{reflect.TypeFor[api.Job](), reflect.TypeFor[Job]()},
		{reflect.TypeFor[api.TaskGroup](), reflect.TypeFor[TaskGroup]()},
		{reflect.TypeFor[api.Task](), reflect.TypeFor[Task]()},
		{reflect.TypeFor[api.Resources](), reflect.TypeFor[Resources]()},
		{reflect.TypeFor[api.NetworkResource](), reflect.TypeFor[NetworkResource]()},
		{reflect.TypeFor[api.Port](), reflect.TypeFor[Port]()},
		{reflect.TypeFor[api.DNSConfig](), reflect.TypeFor[DNSConfig]()},
		{reflect.TypeFor[api.CNIConfig](), reflect.TypeFor[CNIConfig]()},
		{reflect.TypeFor[api.Service](), reflect.TypeFor[Service]()},
		{reflect.TypeFor[api.Template](), reflect.TypeFor[Template]()},
		{reflect.TypeFor[api.ChangeScript](), reflect.TypeFor[ChangeScript]()},
		{reflect.TypeFor[api.WaitConfig](), reflect.TypeFor[WaitConfig]()},
		{reflect.TypeFor[api.TaskArtifact](), reflect.TypeFor[TaskArtifact]()},
		{reflect.TypeFor[api.LogConfig](), reflect.TypeFor[LogConfig]()},
		{reflect.TypeFor[api.TaskLifecycle](), reflect.TypeFor[TaskLifecycle]()},
		{reflect.TypeFor[api.DispatchPayloadConfig](), reflect.TypeFor[DispatchPayloadConfig]()},
		{reflect.TypeFor[api.PeriodicConfig](), reflect.TypeFor[PeriodicConfig]()},
		{reflect.TypeFor[api.ParameterizedJobConfig](), reflect.TypeFor[ParameterizedJobConfig]()},
		{reflect.TypeFor[api.UpdateStrategy](), reflect.TypeFor[UpdateStrategy]()},
		{reflect.TypeFor[api.MigrateStrategy](), reflect.TypeFor[MigrateStrategy]()},
		{reflect.TypeFor[api.RestartPolicy](), reflect.TypeFor[RestartPolicy]()},
		{reflect.TypeFor[api.ReschedulePolicy](), reflect.TypeFor[ReschedulePolicy]()},
		{reflect.TypeFor[api.EphemeralDisk](), reflect.TypeFor[EphemeralDisk]()},
		{reflect.TypeFor[api.Constraint](), reflect.TypeFor[Constraint]()},
		{reflect.TypeFor[api.Affinity](), reflect.TypeFor[Affinity]()},
		{reflect.TypeFor[api.Spread](), reflect.TypeFor[Spread]()},
		{reflect.TypeFor[api.SpreadTarget](), reflect.TypeFor[SpreadTarget]()},
	}
	var unaccounted []string
	for _, p := range pairs {
		for i := range p.api.NumField() {
			f := p.api.Field(i)
			name := p.api.Name() + "." + f.Name
			if _, ok := p.ours.FieldByName(f.Name); !ok && f.IsExported() && !dropped[name] {
				unaccounted = append(unaccounted, name)
			}
		}
	}
	must.SliceEmpty(t, unaccounted, must.Sprintf("api fields neither converted nor listed as dropped: %v", unaccounted))
}
