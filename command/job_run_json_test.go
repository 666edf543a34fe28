package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// job run -output writes the JSON that job run -json takes back, wrapped
// or bare; a file in the API's shape is recognised without -json.
func TestJobRun_JSON(t *testing.T) {
	monitorPollInterval = 20 * time.Millisecond
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	dir := t.TempDir()
	src := filepath.Join("..", "examples", "hello.nomad.hcl")

	code, wrapped, errOut := run(t, "", "job", "run", "-output", src)
	must.Eq(t, 0, code, must.Sprint(errOut))
	var out struct{ Job *api.Job }
	must.NoError(t, json.Unmarshal([]byte(wrapped), &out))
	must.NotNil(t, out.Job)
	bare, err := json.Marshal(out.Job)
	must.NoError(t, err)

	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		must.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	wrappedFile := write("wrapped.out", wrapped)
	bareFile := write("bare.json", string(bare))

	cases := []struct {
		name string
		args []string
	}{
		{"wrapped with -json", []string{"job", "run", "-detach", "-json", wrappedFile}},
		{"bare with -json", []string{"job", "run", "-detach", "-json", bareFile}},
		{"bare .json file without -json", []string{"job", "run", "-detach", bareFile}},
		{"wrapped on stdin", []string{"job", "run", "-detach", "-json", "-"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdin := ""
			if tc.args[len(tc.args)-1] == "-" {
				stdin = wrapped
			}
			full := append([]string{}, tc.args[:2]...)
			full = append(full, "-address", addr)
			full = append(full, tc.args[2:]...)
			code, out, errOut := run(t, stdin, full...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.StrContains(t, out, "Job registration successful")
		})
	}
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	job, _, err := c.Jobs().Info(*out.Job.ID, nil)
	must.NoError(t, err)
	must.Eq(t, *out.Job.TaskGroups[0].Name, *job.TaskGroups[0].Name)

	// job validate and job plan read JSON the same way.
	code, out2, errOut := run(t, "", "job", "validate", "-json", wrappedFile)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out2, "Job validation successful")

	bad := []struct {
		name string
		args []string
		want string
	}{
		{"unknown key", []string{"job", "validate", "-json", write("unknown.json", `{"Job": {"ID": "x", "Colour": "red"}}`)}, `json: unknown field "Colour"`},
		{"variables", []string{"job", "validate", "-json", "-var", "a=b", wrappedFile}, "-var and -var-file cannot be used with a JSON job"},
		{"not JSON", []string{"job", "validate", "-json", src}, "error parsing JSON job file"},
		{"two values", []string{"job", "validate", "-json", write("two.json", string(bare)+string(bare))}, "more than one JSON value"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, "", tc.args...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.want)
		})
	}

	// HCL in JSON syntax stays a job file.
	hclJSON := write("hcl.json", strings.TrimSpace(`{"job": {"hcl-json": {"type": "batch", "group": {"g": {"task": {"t": {"driver": "raw_exec", "config": {"command": "/bin/true"}}}}}}}}`))
	code, out3, errOut := run(t, "", "job", "validate", hclJSON)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out3, "Job validation successful")
}
