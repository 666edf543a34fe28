package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/command/asset"
)

// The example job of `nomad init` runs to completion on a dev agent.
func TestJobInit_ExampleRuns(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	t.Chdir(t.TempDir())

	code, out, errOut := run(t, "", "init")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Example job file written to example.nomad.hcl\n", out)
	written, err := os.ReadFile("example.nomad.hcl")
	must.NoError(t, err)
	must.Eq(t, string(asset.JobExample), string(written))

	code, out, errOut = cli(t, addr, "run", "example.nomad.hcl")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `finished with status "complete"`)

	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	waitFor(t, "the example's alloc to complete", 20*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("example", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
			var states []string
			for _, a := range allocs {
				states = append(states, a.ClientStatus+" "+taskEvents(a))
			}
			return fmt.Errorf("allocs: %v", states)
		}
		return nil
	})
	job, _, err := c.Jobs().Info("example", nil)
	must.NoError(t, err)
	must.Eq(t, "batch", *job.Type)
	must.Eq(t, 10*time.Minute, *job.TaskGroups[0].MaxRunDuration)

	// Job templates live in variables; an agent without them says so
	// rather than "not found".
	if _, err := c.Raw().Query("/v1/vars", new(any), nil); err != nil && strings.Contains(err.Error(), "Invalid URL path") {
		code, _, errOut = cli(t, addr, "job", "init", "-template", "batch", "t.nomad.hcl")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "-template is not supported by this agent: it serves no variables")
		code, _, errOut = cli(t, addr, "job", "init", "-list-templates")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "-list-templates is not supported by this agent")
	}
}

func TestJobInit_Flags(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.nomad.hcl")
	cases := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		stderr  string
		written []byte
	}{
		{"short", []string{"job", "init", "-short", short}, 0, "Example job file written to " + short + "\n", "", asset.JobExampleShort},
		{"existing file is kept", []string{"init", short}, 1, "", "Job '" + short + "' already exists\n", asset.JobExampleShort},
		{"connect refused", []string{"init", "-connect", filepath.Join(dir, "c.hcl")}, 1, "", "-connect is not supported by nomadq", nil},
		{"two files", []string{"init", "a", "b"}, 1, "", "This command takes either no arguments or one: <filename>", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "", tc.args...)
			must.Eq(t, tc.code, code, must.Sprint(errOut))
			must.Eq(t, tc.stdout, out)
			must.StrContains(t, errOut, tc.stderr)
			if tc.written != nil {
				got, err := os.ReadFile(tc.args[len(tc.args)-1])
				must.NoError(t, err)
				must.Eq(t, string(tc.written), string(got))
			}
		})
	}
	// Both example files validate.
	for _, name := range []string{"example.nomad.hcl", "example-short.nomad.hcl"} {
		code, _, errOut := run(t, "", "validate", filepath.Join("asset", name))
		must.Eq(t, 0, code, must.Sprint(name, errOut))
	}
}

// The example says what happens at max_run_duration: the allocation ends
// complete, not failed, with the description "allocation exceeded
// max_run_duration". The example with a 1s limit and a longer sleep shows
// it.
func TestJobInit_ExampleSaysWhatMaxRunDurationDoes(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	example := string(asset.JobExample)
	must.StrContains(t, example, `allocation ends "complete" (not failed`)
	must.StrContains(t, example, `"allocation exceeded`)
	must.StrNotContains(t, example, "marks the allocation failed")

	short := strings.Replace(example, `max_run_duration = "10m"`, `max_run_duration = "1s"`, 1)
	short = strings.Replace(short, "sleep 1", "sleep 60", 1)
	must.NotEq(t, example, short)
	path := filepath.Join(t.TempDir(), "example.nomad.hcl")
	must.NoError(t, os.WriteFile(path, []byte(short), 0o644))

	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	code, _, errOut := cli(t, addr, "job", "run", "-detach", path)
	must.Eq(t, 0, code, must.Sprint(errOut))
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	waitFor(t, "the example's alloc to time out", 30*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("example", false, nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 || allocs[0].ClientStatus != "complete" {
			var states []string
			for _, a := range allocs {
				states = append(states, a.ClientStatus+" "+taskEvents(a))
			}
			return fmt.Errorf("allocs: %v", states)
		}
		if d := allocs[0].ClientDescription; d != "allocation exceeded max_run_duration" {
			return fmt.Errorf("alloc description %q", d)
		}
		return nil
	})
}
