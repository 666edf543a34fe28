package apiconv

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestConvert_ApiRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		job  func() *api.Job
	}{
		{"service", apiServiceJob},
		{"periodic batch", apiBatchJob},
		{"cron batch", apiCronJob},
		{"parameterized sysbatch", apiParameterizedJob},
		{"dispatched child", apiDispatchedChild},
		{"system", apiSystemJob},
		{"minimal", func() *api.Job { return &api.Job{ID: new("x")} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			aj := tc.job()
			aj.Canonicalize()

			sj := Job(aj)
			back := jobToAPI(sj)
			must.Eq(t, aj, back)

			// And the other way: structs -> api -> structs.
			must.Eq(t, sj, Job(jobToAPI(sj)))
		})
	}
}

func TestConvert_Fields(t *testing.T) {
	aj := apiBatchJob()
	aj.Canonicalize()
	sj := Job(aj)

	tg := sj.TaskGroups[0]
	must.NotNil(t, tg.MaxRunDuration)
	must.Eq(t, 10*time.Minute, *tg.MaxRunDuration)
	must.Eq(t, &structs.PeriodicConfig{
		Enabled:         true,
		Specs:           []string{"0 2 * * *", "30 14 * * 1-5"},
		SpecType:        structs.PeriodicSpecCron,
		ProhibitOverlap: true,
		TimeZone:        "Europe/Berlin",
	}, sj.Periodic)
	must.Eq(t, &structs.ReschedulePolicy{
		Attempts: 3, Interval: 24 * time.Hour, Delay: 10 * time.Second, DelayFunction: structs.RescheduleDelayConstant,
	}, tg.ReschedulePolicy)
	must.Eq(t, &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}, tg.Tasks[0].Lifecycle)
	must.Eq(t, &structs.DispatchPayloadConfig{File: "input.json"}, tg.Tasks[1].DispatchPayload)
	must.Eq[any](t, []any{"--since", "24h"}, tg.Tasks[1].Config["args"])

	// MaxRunDuration is sent as integer nanoseconds.
	back := jobToAPI(sj)
	must.Eq(t, int64(600_000_000_000), int64(*back.TaskGroups[0].MaxRunDuration))

	// The conversion copies: changing the result leaves the input alone.
	tg.Tasks[1].Config["args"].([]any)[0] = "--changed"
	*tg.MaxRunDuration = time.Second
	must.Eq(t, "--since", aj.TaskGroups[0].Tasks[1].Config["args"].([]any)[0])
	must.Eq(t, 10*time.Minute, *aj.TaskGroups[0].MaxRunDuration)
}

func TestConvert_Nil(t *testing.T) {
	must.Nil(t, Job(nil))
	must.Nil(t, jobToAPI(nil))

	// Nil pointers of a job that skipped Canonicalize become zero values.
	sj := Job(&api.Job{ID: new("x"), TaskGroups: []*api.TaskGroup{{Tasks: []*api.Task{{Name: "t"}}}}})
	must.Eq(t, "x", sj.ID)
	must.Eq(t, "", sj.Type)
	must.Eq(t, 0, sj.Priority)
	must.Eq(t, 0, sj.TaskGroups[0].Count)
	must.Nil(t, sj.TaskGroups[0].MaxRunDuration)
	must.Eq(t, time.Duration(0), sj.TaskGroups[0].Tasks[0].KillTimeout)
}

func TestConvert_LogConfigEnabledCompat(t *testing.T) {
	aj := &api.Job{ID: new("x"), TaskGroups: []*api.TaskGroup{{Tasks: []*api.Task{{
		Name:      "t",
		LogConfig: &api.LogConfig{MaxFiles: new(2), MaxFileSizeMB: new(3), Enabled: new(false)},
	}}}}}
	sj := Job(aj)
	must.Eq(t, &structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 3, Disabled: true}, sj.TaskGroups[0].Tasks[0].LogConfig)
}
