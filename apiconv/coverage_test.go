package apiconv

import (
	"reflect"
	"sort"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestConvert_FixturesCoverEveryField guards the round-trip tests: every
// field of every type reachable from Job must be set (non-zero) in at least
// one fixture, so a field added to the model but forgotten in this package
// makes TestConvert_ApiRoundTrip fail instead of passing unnoticed.
func TestConvert_FixturesCoverEveryField(t *testing.T) {
	seen := make(map[string]bool)
	for _, f := range []func() *api.Job{apiServiceJob, apiBatchJob, apiParameterizedJob, apiDispatchedChild, apiSystemJob, apiCronJob} {
		aj := f()
		aj.Canonicalize()
		markSet(reflect.ValueOf(Job(aj)), seen)
	}

	// Fields no jobspec sets and api.Job.Canonicalize leaves zero.
	allowed := map[string]bool{
		"Job.StatusDescription": true,
		"Service.Kind":          true, // a Consul service kind; we carry it only
		// Consul-only check settings: refused at submission (see fields).
		"ServiceCheck.Expose": true, "ServiceCheck.InitialStatus": true, "ServiceCheck.TLSServerName": true,
		"ServiceCheck.SuccessBeforePassing": true, "ServiceCheck.FailuresBeforeCritical": true,
		"ServiceCheck.FailuresBeforeWarning": true, "CheckRestart.IgnoreWarnings": true,
		// Set by the server at registration, never by a submission.
		"ScalingPolicy.ID": true, "ScalingPolicy.Target": true,
		"ScalingPolicy.CreateIndex": true, "ScalingPolicy.ModifyIndex": true,
		// Not in the api module: the agent reads it from the request body
		// beside api.Job (agent/job_max_run_warning.go).
		"TaskGroup.MaxRunDurationWarning": true, "MaxRunDurationWarning.Before": true, "MaxRunDurationWarning.Signal": true,
	}
	var missing []string
	for _, field := range allFields(reflect.TypeFor[structs.Job](), make(map[reflect.Type]bool)) {
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
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[structs.Job]().PkgPath() || visited[t] {
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
