package structs

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/shoenig/test/must"
)

func TestValidate_MaxRunDurationUnits(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(tg *TaskGroup)
		err    string
	}{
		{
			name:   "a bare number is nanoseconds",
			mutate: func(tg *TaskGroup) { tg.MaxRunDuration = new(time.Duration(600)) },
			err:    `Task group "g": max_run_duration 600 is 600ns; did you mean "600s"? (the minimum is 1s)`,
		},
		{
			name:   "below one second",
			mutate: func(tg *TaskGroup) { tg.MaxRunDuration = new(500 * time.Millisecond) },
			err:    `Task group "g": max_run_duration 500000000 is 500ms; the minimum is 1s`,
		},
		{
			name: "warning before a bare number",
			mutate: func(tg *TaskGroup) {
				tg.MaxRunDuration = new(time.Hour)
				tg.MaxRunDurationWarning = &MaxRunDurationWarning{Before: 300, Signal: "SIGUSR1"}
			},
			err: `Task group "g": max_run_duration_warning before 300 is 300ns; did you mean "300s"? (the minimum is 1s)`,
		},
		{
			name: "warning before not shorter than the limit",
			mutate: func(tg *TaskGroup) {
				tg.MaxRunDuration = new(time.Minute)
				tg.MaxRunDurationWarning = &MaxRunDurationWarning{Before: time.Minute, Signal: "SIGUSR1"}
			},
			err: `Task group "g": max_run_duration_warning before 1m0s must be less than max_run_duration 1m0s`,
		},
		{
			name: "warning before negative",
			mutate: func(tg *TaskGroup) {
				tg.MaxRunDuration = new(time.Minute)
				tg.MaxRunDurationWarning = &MaxRunDurationWarning{Before: -time.Second, Signal: "SIGUSR1"}
			},
			err: `Task group "g": max_run_duration_warning before must be greater than zero, got -1s`,
		},
		{
			name: "warning without a limit",
			mutate: func(tg *TaskGroup) {
				tg.MaxRunDurationWarning = &MaxRunDurationWarning{Before: time.Minute, Signal: "SIGUSR1"}
			},
			err: `Task group "g": max_run_duration_warning is only allowed with max_run_duration set`,
		},
		{
			name: "unknown signal",
			mutate: func(tg *TaskGroup) {
				tg.MaxRunDuration = new(time.Hour)
				tg.MaxRunDurationWarning = &MaxRunDurationWarning{Before: time.Minute, Signal: "SIGNOPE"}
			},
			err: `Task group "g": max_run_duration_warning signal "SIGNOPE" is not a known signal, such as "SIGUSR1"`,
		},
		{
			name: "missing signal",
			mutate: func(tg *TaskGroup) {
				tg.MaxRunDuration = new(time.Hour)
				tg.MaxRunDurationWarning = &MaxRunDurationWarning{Before: time.Minute}
			},
			err: `Task group "g": max_run_duration_warning signal must be set, such as "SIGUSR1"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob(JobTypeBatch)
			tc.mutate(j.TaskGroups[0])
			err := j.Validate()
			must.EqError(t, err, tc.err)
		})
	}
}

func TestValidate_MaxRunDurationWarningAccepted(t *testing.T) {
	for _, sig := range []string{"SIGUSR1", "usr2", "TERM"} {
		j := validJob(JobTypeSysBatch)
		j.TaskGroups[0].MaxRunDuration = new(time.Second * 6)
		j.TaskGroups[0].MaxRunDurationWarning = &MaxRunDurationWarning{Before: 3 * time.Second, Signal: sig}
		must.NoError(t, j.Validate())
		c := j.Copy()
		c.TaskGroups[0].MaxRunDurationWarning.Before = time.Second
		must.Eq(t, 3*time.Second, j.TaskGroups[0].MaxRunDurationWarning.Before, must.Sprint("Copy shares the warning"))
	}
}

// The API's JSON of a group without a warning does not name the field, so
// Nomad's clients see the job as Nomad would send it.
func TestMaxRunDurationWarning_OmittedWhenUnset(t *testing.T) {
	var buf bytes.Buffer
	must.NoError(t, codec.NewEncoder(&buf, JsonHandle).Encode(&TaskGroup{Name: "g"}))
	must.StrNotContains(t, buf.String(), "MaxRunDurationWarning")
	buf.Reset()
	w := &TaskGroup{Name: "g", MaxRunDurationWarning: &MaxRunDurationWarning{Before: time.Minute, Signal: "SIGUSR1"}}
	must.NoError(t, codec.NewEncoder(&buf, JsonHandle).Encode(w))
	must.StrContains(t, buf.String(), `"MaxRunDurationWarning":{"Before":60000000000,"Signal":"SIGUSR1"}`)
}
