package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

// warningJobFile writes a batch job file whose group "g" has
// max_run_duration = "6s" and a max_run_duration_warning sending SIGUSR1
// before it.
func warningJobFile(t *testing.T, id, before string) string {
	t.Helper()
	src := fmt.Sprintf(`job %q {
  type = "batch"
  group "g" {
    max_run_duration = "6s"
    max_run_duration_warning {
      before = %s
      signal = "SIGUSR1"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["1"]
      }
    }
  }
}
`, id, before)
	path := filepath.Join(t.TempDir(), id+".nomad.hcl")
	must.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// groupWarnings is the part of a job's JSON that holds the warnings.
type groupWarnings struct {
	TaskGroups []struct {
		Name                  string
		MaxRunDurationWarning *struct {
			Before int64
			Signal string
		}
	}
}

func mustWarning(t *testing.T, raw []byte) {
	t.Helper()
	var body struct {
		Job *groupWarnings
		groupWarnings
	}
	must.NoError(t, json.Unmarshal(raw, &body))
	g := &body.groupWarnings
	if body.Job != nil {
		g = body.Job
	}
	must.Len(t, 1, g.TaskGroups, must.Sprint(string(raw)))
	w := g.TaskGroups[0].MaxRunDurationWarning
	must.NotNil(t, w, must.Sprint(string(raw)))
	must.Eq(t, int64(3e9), w.Before)
	must.Eq(t, "SIGUSR1", w.Signal)
}

// A job file's max_run_duration_warning block takes effect: job run sends
// it, the agent stores it, job inspect shows it, job run -json of that
// output keeps it, and job run -output and /v1/jobs/parse write it.
func TestJobRun_MaxRunDurationWarningBlock(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	file := warningJobFile(t, "warned", `"3s"`)

	code, out, errOut := run(t, "", "job", "validate", file)
	must.Eq(t, 0, code, must.Sprint(out, errOut))

	code, out, errOut = cli(t, addr, "job", "run", "-output", file)
	must.Eq(t, 0, code, must.Sprint(errOut))
	mustWarning(t, []byte(out))

	src, err := os.ReadFile(file)
	must.NoError(t, err)
	var parsed json.RawMessage
	_, err = c.Raw().Write("/v1/jobs/parse", &api.JobsParseRequest{JobHCL: string(src)}, &parsed, nil)
	must.NoError(t, err)
	mustWarning(t, parsed)

	code, out, errOut = cli(t, addr, "job", "plan", file)
	must.NotEq(t, 255, code, must.Sprint(out, errOut))

	code, out, errOut = cli(t, addr, "job", "run", "-detach", file)
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	raw, err := roundTripGet(addr, "/v1/job/warned")
	must.NoError(t, err)
	mustWarning(t, []byte(raw))

	// The plan sends the warning: the same file plans no change to it,
	// another before plans the change.
	code, out, errOut = cli(t, addr, "job", "plan", file)
	must.NotEq(t, 255, code, must.Sprint(out, errOut))
	must.StrNotContains(t, out, "Before")
	code, out, errOut = cli(t, addr, "job", "plan", warningJobFile(t, "warned", `"2s"`))
	must.NotEq(t, 255, code, must.Sprint(out, errOut))
	must.StrContains(t, out, "MaxRunDurationWarning {")
	must.StrContains(t, out, `Before: "3s" => "2s"`)

	code, inspected, errOut := cli(t, addr, "job", "inspect", "warned")
	must.Eq(t, 0, code, must.Sprint(errOut))
	mustWarning(t, []byte(inspected))
	code, out, errOut = cli(t, addr, "job", "inspect", "-version", "0", "warned")
	must.Eq(t, 0, code, must.Sprint(errOut))
	mustWarning(t, []byte(out))

	// What inspect printed registers again, under another ID, with the
	// warning.
	var again map[string]map[string]any
	must.NoError(t, json.Unmarshal([]byte(inspected), &again))
	again["Job"]["ID"] = "warned-again"
	again["Job"]["Name"] = "warned-again"
	buf, err := json.Marshal(again)
	must.NoError(t, err)
	jsonFile := filepath.Join(t.TempDir(), "again.json")
	must.NoError(t, os.WriteFile(jsonFile, buf, 0o644))
	code, out, errOut = cli(t, addr, "job", "run", "-detach", "-json", jsonFile)
	must.Eq(t, 0, code, must.Sprint(out, errOut))
	raw, err = roundTripGet(addr, "/v1/job/warned-again")
	must.NoError(t, err)
	mustWarning(t, []byte(raw))
}

// A warning the server refuses is refused by the CLI before any request,
// exit 1, naming the field: in a job file and in a JSON job.
func TestJobRun_MaxRunDurationWarningRefused(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()

	file := warningJobFile(t, "late", `"6s"`)
	code, out, errOut := cli(t, addr, "job", "run", file)
	must.Eq(t, 1, code, must.Sprint(out, errOut))
	must.StrContains(t, errOut, `Task group "g": max_run_duration_warning before 6s must be less than max_run_duration 6s`)
	code, out, errOut = run(t, "", "job", "validate", file)
	must.Eq(t, 1, code, must.Sprint(out, errOut))
	must.StrContains(t, errOut, `Task group "g": max_run_duration_warning before 6s must be less than max_run_duration 6s`)
	code, out, errOut = cli(t, addr, "job", "run", warningJobFile(t, "bare", "600"))
	must.Eq(t, 1, code, must.Sprint(out, errOut))
	must.StrContains(t, errOut, `max_run_duration_warning before 600 is 600ns; did you mean "600s"?`)

	code, out, errOut = cli(t, addr, "job", "run", "-output", warningJobFile(t, "ok", `"3s"`))
	must.Eq(t, 0, code, must.Sprint(errOut))
	var job map[string]map[string]any
	must.NoError(t, json.Unmarshal([]byte(out), &job))
	job["Job"]["TaskGroups"].([]any)[0].(map[string]any)["MaxRunDurationWarning"] = map[string]any{"Before": 6e9, "Signal": "SIGUSR1"}
	buf, err := json.Marshal(job)
	must.NoError(t, err)
	jsonFile := filepath.Join(t.TempDir(), "late.json")
	must.NoError(t, os.WriteFile(jsonFile, buf, 0o644))
	code, out, errOut = cli(t, addr, "job", "run", "-json", jsonFile)
	must.Eq(t, 1, code, must.Sprint(out, errOut))
	must.StrContains(t, errOut, "max_run_duration_warning before 6s must be less than max_run_duration 6s")

	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	jobs, _, err := c.Jobs().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, jobs)
}
