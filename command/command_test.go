package command

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// run executes the CLI in-process and returns its exit code and streams.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(args, Streams{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "", "version")
	must.Eq(t, 0, code)
	must.Eq(t, "Nomad v"+Version+" (nomadq)\n", out)
}

func TestUnknownCommand(t *testing.T) {
	// As in Nomad: the list of commands on stderr and exit code 127.
	code, out, errOut := run(t, "", "jbo", "run")
	must.Eq(t, 127, code)
	must.Eq(t, "", out)
	must.StrContains(t, errOut, "Usage: nomad [-version] [-help]")
	must.StrContains(t, errOut, "Common commands:")
}

func TestJobGroupWithoutSubcommandPrintsUsage(t *testing.T) {
	code, _, errOut := run(t, "", "job")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Usage: nomad job <subcommand>")
	must.RegexMatch(t, regexp.MustCompile(`(?m)^ +run +Run a new job`), errOut)
	must.RegexMatch(t, regexp.MustCompile(`(?m)^ +validate +Check a job specification`), errOut)
}

func TestJobRunOutputPrintsWireJSON(t *testing.T) {
	code, out, errOut := run(t, "", "job", "run", "-output", "testdata/timeout.nomad.hcl")
	must.Eq(t, 0, code, must.Sprint(errOut))

	var got struct {
		Job struct {
			ID         string
			Type       string
			TaskGroups []struct {
				Name           string
				MaxRunDuration int64
			}
		}
	}
	must.NoError(t, json.Unmarshal([]byte(out), &got))
	must.Eq(t, "timeout", got.Job.ID)
	must.Eq(t, "batch", got.Job.Type)
	must.Len(t, 1, got.Job.TaskGroups)
	must.Eq(t, int64(3_000_000_000), got.Job.TaskGroups[0].MaxRunDuration)
}

func TestJobRunOutputFromStdin(t *testing.T) {
	code, out, errOut := run(t, "job \"x\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"raw_exec\"\n    }\n  }\n}\n", "job", "run", "-output", "-")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `"ID": "x"`)
}

func TestJobValidate(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		code    int
		stdout  string
		stderrs []string
	}{
		{
			name:   "valid batch job",
			args:   []string{"testdata/timeout.nomad.hcl"},
			stdout: "Job validation successful\n",
		},
		{
			name: "max_run_duration on a service job",
			args: []string{"testdata/service_mrd.nomad.hcl"},
			code: 1,
			stderrs: []string{
				`testdata/service_mrd.nomad.hcl:5,24-29: Invalid max_run_duration; Task group "web": max_run_duration is only allowed for batch and sysbatch jobs, not service jobs`,
			},
		},
		{
			name:    "syntax error names file and position",
			args:    []string{"testdata/syntax.nomad.hcl"},
			code:    1,
			stderrs: []string{"error parsing job file testdata/syntax.nomad.hcl", "testdata/syntax.nomad.hcl:3,"},
		},
		{
			name:    "missing file",
			args:    []string{"testdata/nope.nomad.hcl"},
			code:    1,
			stderrs: []string{"error reading job file", "nope.nomad.hcl"},
		},
		{
			name:    "no argument",
			args:    nil,
			code:    1,
			stderrs: []string{"This command takes one argument: <path>"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "", append([]string{"job", "validate"}, tc.args...)...)
			must.Eq(t, tc.code, code, must.Sprint(errOut))
			must.Eq(t, tc.stdout, out)
			for _, s := range tc.stderrs {
				must.StrContains(t, errOut, s)
			}
		})
	}
}

func TestJobRunWithoutReachableServer(t *testing.T) {
	// A port that was just free and is now closed: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	addr := "http://" + l.Addr().String()
	must.NoError(t, l.Close())

	code, out, errOut := run(t, "", "job", "run", "-address", addr, "testdata/timeout.nomad.hcl")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.StrContains(t, errOut, "Error submitting job:")
	must.StrContains(t, errOut, "connection refused")
}

func TestJobRunRejectsInvalidJobBeforeSubmitting(t *testing.T) {
	// The address is never dialed: validation fails first.
	code, _, errOut := run(t, "", "job", "run", "-address", "http://127.0.0.1:1", "testdata/service_mrd.nomad.hcl")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "max_run_duration is only allowed for batch and sysbatch jobs")
	must.StrNotContains(t, errOut, "Error submitting job")
}

// Every example job prints its wire JSON, with max_run_duration in
// nanoseconds where a group sets it.
func TestJobRunOutputForEveryExample(t *testing.T) {
	files, err := filepath.Glob("../examples/*.nomad.hcl")
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, out, errOut := run(t, "", "job", "run", "-output", f)
			must.Eq(t, 0, code, must.Sprint(errOut))
			var got struct {
				Job struct {
					ID         string
					TaskGroups []struct{ MaxRunDuration *int64 }
				}
			}
			must.NoError(t, json.Unmarshal([]byte(out), &got))
			must.NotEq(t, "", got.Job.ID)
			src, err := os.ReadFile(f)
			must.NoError(t, err)
			if strings.Contains(string(src), "max_run_duration") {
				found := false
				for _, tg := range got.Job.TaskGroups {
					if tg.MaxRunDuration != nil {
						found = true
						must.Positive(t, *tg.MaxRunDuration)
						must.Eq(t, int64(0), *tg.MaxRunDuration%int64(time.Second), must.Sprint("nanoseconds of a whole-second duration"))
					}
				}
				must.True(t, found)
			}
		})
	}
}
