package command

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// Against a real agent: the plan of a new job is its outline, not a
// page of defaults; -verbose and history -p print durations as such.
func TestJobPlanAndHistory_DiffOutput(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "job", "plan", "testdata/mock.nomad.hcl")
	must.Eq(t, 1, code, must.Sprint(errOut))
	must.StrHasPrefix(t, "+ Job: \"mock\"\n+ Task Group: \"work\" (1 create)\n  + Task: \"work\" (forces create)\n\nScheduler dry-run:\n", out)
	must.StrNotContains(t, out, "RestartPolicy")

	code, out, errOut = cli(t, addr, "job", "plan", "-verbose", "testdata/mock.nomad.hcl")
	must.Eq(t, 1, code, must.Sprint(errOut))
	must.StrContains(t, out, "\n  + MaxRunDuration: \"30s\"\n")
	must.StrContains(t, out, "\n    + KillTimeout: \"5s\"\n")
	must.StrNotContains(t, out, "Payload")
	must.StrNotContains(t, out, "000000000\"")

	for _, f := range []string{"testdata/mock.nomad.hcl", "testdata/mock_changed.nomad.hcl"} {
		code, _, errOut = cli(t, addr, "job", "run", "-detach", f)
		must.Eq(t, 0, code, must.Sprint(errOut))
	}
	code, out, errOut = cli(t, addr, "job", "history", "-p", "mock")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "+/- Task Group: \"work\"\n  +/- MaxRunDuration: \"30s\" => \"45s\"\n")
	must.False(t, strings.Contains(out, "000000000"), must.Sprint(out))
}

func TestFormatJobDiff(t *testing.T) {
	added := func(name, v string) *api.FieldDiff { return &api.FieldDiff{Type: "Added", Name: name, New: v} }
	newJob := &api.JobDiff{
		Type: "Added", ID: "example",
		Fields: []*api.FieldDiff{added("Priority", "50"), added("Type", "batch")},
		Objects: []*api.ObjectDiff{{Type: "Added", Name: "Datacenters",
			Fields: []*api.FieldDiff{added("Datacenters[0]", "*")}}},
		TaskGroups: []*api.TaskGroupDiff{{
			Type: "Added", Name: "work", Updates: map[string]uint64{"create": 1},
			Fields: []*api.FieldDiff{added("Count", "1"), added("MaxRunDuration", "600000000000")},
			Objects: []*api.ObjectDiff{{Type: "Added", Name: "RestartPolicy",
				Fields: []*api.FieldDiff{added("Attempts", "3"), added("Delay", "15000000000"), added("Interval", "86400000000000")}}},
			Tasks: []*api.TaskDiff{{
				Type: "Added", Name: "hello", Annotations: []string{"forces create"},
				Fields: []*api.FieldDiff{added("Driver", "raw_exec"), added("KillTimeout", "5000000000")},
			}},
		}},
	}
	edited := &api.JobDiff{
		Type: "Edited", ID: "example",
		TaskGroups: []*api.TaskGroupDiff{{
			Type: "Edited", Name: "work",
			Fields: []*api.FieldDiff{{Type: "Edited", Name: "MaxRunDuration", Old: "600000000000", New: "5400000000000"}},
			Objects: []*api.ObjectDiff{{Type: "Edited", Name: "ReschedulePolicy",
				Fields: []*api.FieldDiff{{Type: "Edited", Name: "Delay", Old: "5000000000", New: "1500000000"},
					{Type: "Edited", Name: "Attempts", Old: "1", New: "2"}}}},
			Tasks: []*api.TaskDiff{{
				Type: "Edited", Name: "hello", Annotations: []string{"forces create/destroy update"},
				Objects: []*api.ObjectDiff{
					{Type: "Edited", Name: "Config", Fields: []*api.FieldDiff{{Type: "Edited", Name: "Config.args[1]", Old: "sleep 1", New: "sleep 2"}}},
					{Type: "Added", Name: "Services", Fields: []*api.FieldDiff{
						added("Services[0].Checks[0].Interval", "10000000000"), added("Services[0].PortLabel", "8080")}},
					{Type: "Edited", Name: "Meta", Fields: []*api.FieldDiff{{Type: "Edited", Name: "Meta.timeout", Old: "30", New: "60"}}},
				},
			}},
		}},
	}
	cases := []struct {
		name    string
		diff    *api.JobDiff
		verbose bool
		want    string
	}{
		{"a new job prints its job, groups and tasks, not every default", newJob, false, `+ Job: "example"
+ Task Group: "work" (1 create)
  + Task: "hello" (forces create)`},
		{"-verbose prints every field, durations as durations", newJob, true, `+ Job: "example"
  + Priority: "50"
  + Type: "batch"
  + Datacenters {
    + Datacenters[0]: "*"
  }
+ Task Group: "work" (1 create)
  + Count: "1"
  + MaxRunDuration: "10m"
  + RestartPolicy {
    + Attempts: "3"
    + Delay: "15s"
    + Interval: "24h"
  }
  + Task: "hello" (forces create)
    + Driver: "raw_exec"
    + KillTimeout: "5s"`},
		{"an edited job prints what changed, durations as durations", edited, false, `+/- Job: "example"
+/- Task Group: "work"
  +/- MaxRunDuration: "10m" => "1h30m"
  +/- ReschedulePolicy {
    +/- Attempts: "1" => "2"
    +/- Delay: "5s" => "1.5s"
  }
  +/- Task: "hello" (forces create/destroy update)
    +/- Config {
      +/- Config.args[1]: "sleep 1" => "sleep 2"
    }
    + Services {
      + Services[0].Checks[0].Interval: "10s"
      + Services[0].PortLabel: "8080"
    }
    +/- Meta {
      +/- Meta.timeout: "30" => "60"
    }`},
		{"an unchanged job", &api.JobDiff{Type: "None", ID: "example"}, false, `Job: "example"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, formatJobDiff(tc.diff, tc.verbose))
		})
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1500 * time.Millisecond: "1.5s", 10 * time.Minute: "10m", 90 * time.Minute: "1h30m",
		24 * time.Hour: "24h", time.Hour + time.Second: "1h0m1s", 250 * time.Microsecond: "250µs",
	} {
		must.Eq(t, want, shortDuration(d))
	}
}
