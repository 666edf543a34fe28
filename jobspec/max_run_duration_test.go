package jobspec

import (
	"testing"

	"github.com/shoenig/test/must"
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

// The warning block is refused at its position, saying where it can be
// set instead.
func TestParse_MaxRunDurationWarningBlockRefused(t *testing.T) {
	src := `job "j" {
  type = "batch"
  group "g" {
    max_run_duration = "6s"
    max_run_duration_warning {
      before = "3s"
      signal = "SIGUSR1"
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}
`
	_, err := ParseWithConfig(&ParseConfig{Path: "j.nomad.hcl", Body: []byte(src), Strict: true})
	must.EqError(t, err, `j.nomad.hcl:5,5-29: Unsupported block type; A max_run_duration_warning block is not read from job files yet: set TaskGroups[].MaxRunDurationWarning {"Before": nanoseconds, "Signal": "SIGUSR1"} in the job's JSON and register it with PUT /v1/jobs.`)
}
