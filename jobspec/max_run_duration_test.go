package jobspec

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// A number without a unit is nanoseconds; below one second it is refused
// at the attribute, suggesting the unit.
func TestParse_MaxRunDurationBareNumber(t *testing.T) {
	src := `job "j" {
  type = "batch"
  group "g" {
    max_run_duration = 600
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}
`
	_, err := ParseWithConfig(&ParseConfig{Path: "j.nomad.hcl", Body: []byte(src), Strict: true})
	must.EqError(t, err, `j.nomad.hcl:4,24-27: Invalid max_run_duration; Task group "g": max_run_duration 600 is 600ns; did you mean "600s"? (the minimum is 1s)`)
}

const warningJob = `job "j" {
  type = "batch"
  group "g" {
    max_run_duration = "6s"
    max_run_duration_warning {
      before = %s
      signal = "SIGUSR1"
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
  group "other" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}
`

// The warning block is decoded beside the job, by group name, and written
// into the job's JSON.
func TestParse_MaxRunDurationWarningBlock(t *testing.T) {
	res, err := ParseResult(&ParseConfig{Path: "j.nomad.hcl", Body: []byte(fmt.Sprintf(warningJob, `"3s"`)), Strict: true})
	must.NoError(t, err)
	must.Eq(t, map[string]*structs.MaxRunDurationWarning{"g": {Before: 3 * time.Second, Signal: "SIGUSR1"}}, res.MaxRunWarnings)

	body, err := json.Marshal(struct{ Job *api.Job }{res.Job})
	must.NoError(t, err)
	body, err = InjectMaxRunWarnings(body, res.Job.TaskGroups, res.MaxRunWarnings)
	must.NoError(t, err)
	var back struct {
		Job struct {
			TaskGroups []struct {
				Name                  string
				MaxRunDuration        int64
				MaxRunDurationWarning *struct {
					Before int64
					Signal string
				}
			}
		}
	}
	must.NoError(t, json.Unmarshal(body, &back))
	must.Len(t, 2, back.Job.TaskGroups)
	must.Eq(t, "g", back.Job.TaskGroups[0].Name)
	must.Eq(t, int64(6e9), back.Job.TaskGroups[0].MaxRunDuration)
	must.NotNil(t, back.Job.TaskGroups[0].MaxRunDurationWarning)
	must.Eq(t, int64(3e9), back.Job.TaskGroups[0].MaxRunDurationWarning.Before)
	must.Eq(t, "SIGUSR1", back.Job.TaskGroups[0].MaxRunDurationWarning.Signal)
	must.Nil(t, back.Job.TaskGroups[1].MaxRunDurationWarning)

	// Callers that do not ask for it still parse the file.
	job, err := ParseWithConfig(&ParseConfig{Path: "j.nomad.hcl", Body: []byte(fmt.Sprintf(warningJob, `"3s"`)), Strict: true})
	must.NoError(t, err)
	must.Len(t, 2, job.TaskGroups)
}

// A warning the server would refuse is refused at the block, naming the
// group and the field; a bare number is nanoseconds and suggests the unit.
func TestParse_MaxRunDurationWarningInvalid(t *testing.T) {
	cases := []struct{ before, want string }{
		{`"6s"`, `j.nomad.hcl:5,5-29: Invalid max_run_duration_warning; Task group "g": max_run_duration_warning before 6s must be less than max_run_duration 6s`},
		{`600`, `j.nomad.hcl:5,5-29: Invalid max_run_duration_warning; Task group "g": max_run_duration_warning before 600 is 600ns; did you mean "600s"? (the minimum is 1s)`},
		{`"soon"`, `j.nomad.hcl:6,16-22: Invalid duration; before: time: invalid duration "soon"`},
	}
	for _, c := range cases {
		t.Run(c.before, func(t *testing.T) {
			_, err := ParseResult(&ParseConfig{Path: "j.nomad.hcl", Body: []byte(fmt.Sprintf(warningJob, c.before)), Strict: true})
			must.EqError(t, err, c.want)
		})
	}
}

// In HCL's JSON syntax too.
func TestParse_MaxRunDurationWarningJSONSyntax(t *testing.T) {
	src := `{"job": {"j": {"type": "batch", "group": {"g": {
  "max_run_duration": "6s",
  "max_run_duration_warning": {"before": "2s", "signal": "SIGTERM"},
  "task": {"t": {"driver": "raw_exec", "config": {"command": "/bin/true"}}}}}}}}`
	res, err := ParseResult(&ParseConfig{Path: "j.nomad.json", Body: []byte(src), Strict: true})
	must.NoError(t, err)
	must.Eq(t, map[string]*structs.MaxRunDurationWarning{"g": {Before: 2 * time.Second, Signal: "SIGTERM"}}, res.MaxRunWarnings)
}

// Groups made by a dynamic block carry their own warning.
func TestParse_MaxRunDurationWarningDynamicGroups(t *testing.T) {
	src := `job "j" {
  type = "batch"
  dynamic "group" {
    for_each = {a = "2s", b = "4s"}
    labels   = [group.key]
    content {
      max_run_duration = "6s"
      max_run_duration_warning {
        before = group.value
        signal = "SIGUSR1"
      }
      task "t" {
        driver = "raw_exec"
        config { command = "/bin/true" }
      }
    }
  }
}
`
	res, err := ParseResult(&ParseConfig{Path: "j.nomad.hcl", Body: []byte(src), Strict: true})
	must.NoError(t, err)
	must.Eq(t, map[string]*structs.MaxRunDurationWarning{
		"a": {Before: 2 * time.Second, Signal: "SIGUSR1"},
		"b": {Before: 4 * time.Second, Signal: "SIGUSR1"},
	}, res.MaxRunWarnings)
}
