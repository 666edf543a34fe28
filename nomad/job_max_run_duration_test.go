package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestNamespaceMaxRun_Write(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	upsert := func(meta map[string]string) error {
		var reply structs.GenericResponse
		return s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{
			Namespaces: []*structs.Namespace{{Name: "ml", Meta: meta}},
		}, &reply)
	}
	cases := []struct {
		name string
		meta map[string]string
		err  string
	}{
		{"malformed ceiling", map[string]string{"max_run_duration_max": "soon"},
			`Invalid namespace "ml": meta max_run_duration_max "soon" is not a duration: use a Go duration such as "30m" or "2h"`},
		{"negative default", map[string]string{"max_run_duration_default": "-5m"},
			`Invalid namespace "ml": meta max_run_duration_default "-5m" is not allowed: must be at least 1s`},
		{"default above ceiling", map[string]string{"max_run_duration_default": "2h", "max_run_duration_max": "1h"},
			`Invalid namespace "ml": meta max_run_duration_default "2h" is not allowed: above max_run_duration_max "1h"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustRefuse(t, upsert(tc.meta), tc.err)
			ns, err := s.State().NamespaceByName(nil, "ml")
			must.NoError(t, err)
			must.Nil(t, ns, must.Sprint("a refused namespace is stored"))
		})
	}
	must.NoError(t, upsert(map[string]string{"max_run_duration_default": "3s", "max_run_duration_max": "1h"}))
}

func TestNamespaceMaxRun_Register(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	var nsReply structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{
		{Name: "ml", Meta: map[string]string{"max_run_duration_default": "3s", "max_run_duration_max": "1h"}},
		{Name: "capped", Meta: map[string]string{"max_run_duration_max": "10m"}},
	}}, &nsReply))

	job := func(ns, id, typ string, d *time.Duration) *structs.Job {
		j := mockJob(id)
		j.Namespace, j.Type = ns, typ
		j.TaskGroups[0].MaxRunDuration = d
		if typ == structs.JobTypeBatch {
			j.TaskGroups[0].ReschedulePolicy = nil
		}
		return j
	}
	stored := func(ns, id string) *structs.Job {
		t.Helper()
		j, err := s.State().JobByID(nil, ns, id)
		must.NoError(t, err)
		return j
	}

	register(t, s, job("ml", "train", structs.JobTypeBatch, nil), nil)
	must.Eq(t, 3*time.Second, *stored("ml", "train").TaskGroups[0].MaxRunDuration)

	register(t, s, job("capped", "train", structs.JobTypeBatch, nil), nil)
	must.Eq(t, 10*time.Minute, *stored("capped", "train").TaskGroups[0].MaxRunDuration, must.Sprint("the ceiling is the default"))

	register(t, s, job("ml", "asks", structs.JobTypeBatch, new(20*time.Minute)), nil)
	must.Eq(t, 20*time.Minute, *stored("ml", "asks").TaskGroups[0].MaxRunDuration)

	register(t, s, job("ml", "web", structs.JobTypeService, nil), nil)
	must.Nil(t, stored("ml", "web").TaskGroups[0].MaxRunDuration)

	over := job("ml", "long", structs.JobTypeBatch, new(2*time.Hour))
	const msg = `Task group "work": max_run_duration 2h0m0s is above the ceiling of namespace "ml" (meta max_run_duration_max = 1h0m0s)`
	var reg structs.JobRegisterResponse
	mustRefuse(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: over}, &reg), msg)
	var plan structs.JobPlanResponse
	mustRefuse(t, s.RPC("Job.Plan", &structs.JobPlanRequest{Job: over}, &plan), msg)
	must.Nil(t, stored("ml", "long"), must.Sprint("a refused job is stored"))
}
