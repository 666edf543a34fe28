package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

// roundTripDirs are the job files of the round trip: every file we keep
// for tests and examples that nomadq accepts.
var roundTripDirs = []string{
	filepath.Join("..", "examples"),
	filepath.Join("..", "jobspec", "testdata", "good"),
	"testdata",
	filepath.Join("testdata", "nomad_accepts"),
	filepath.Join("testdata", "roundtrip"),
}

// roundTripSkipped are the files of those dirs left out, each with why.
// A file not listed here must pass.
var roundTripSkipped = map[string]string{
	"syntax.nomad.hcl":                 "a syntax error on purpose",
	"service_mrd.nomad.hcl":            "refused on purpose: max_run_duration on a service job",
	"init_example.nomad.hcl":           "Nomad's own init example: a Consul service and a docker port mapping",
	"vault_identity.nomad.hcl":         "a parser test of vault blocks; Vault is refused",
	"two_default_identities.nomad.hcl": "a parser test; two default identities are refused",
	"constraints.nomad.hcl":            "a parser test; semver \"~> 22.04\" is refused, by Nomad too",
	"disk_logs.nomad.hcl":              "a parser test; sticky and migrate ephemeral disks are refused",
	"duration_forms.nomad.hcl":         "a parser test; stop_after_client_disconnect is refused",
	"multi_group.nomad.hcl":            "a parser test; a user on a raw_exec task is refused",
	"service_checks.nomad.hcl":         "a parser test; Consul services and host networks are refused",
	"service_web.nomad.hcl":            "a parser test; Consul services are refused",
	"templates.nomad.hcl":              "a parser test; template wait is refused",
}

// roundTripVars are the -var values a file needs.
var roundTripVars = map[string][]string{
	"variables_validation.nomad.hcl": {"env=prod"},
}

// roundTripServerFields are what the server changes on a job without a
// new version, left out when two reads are compared: the status (and the
// ModifyIndex of its write) follows the evaluation every registration
// creates. The rest stays, Version, JobModifyIndex and SubmitTime too: as
// in Nomad, registering the same job again writes no new version.
var roundTripServerFields = []string{"ModifyIndex", "Status", "StatusDescription"}

// The output of our parser (job run -output, /v1/jobs/parse) is a job
// real Nomad would take, and our own agent does: for each job file we
// accept, the parse validates at /v1/validate/job with no error, and the
// job is stable across parse -> register -> read -> register what was
// read (with job run -json) -> read: the second read's JSON equals the
// first's, byte for byte, once roundTripServerFields are left out.
func TestJobParse_RoundTrip(t *testing.T) {
	// A server alone: the round trip is about the job as stored, and
	// without a client nothing runs that must be stopped at the end.
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	// memory_max is refused unless the cluster oversubscribes memory.
	sc, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	sc.SchedulerConfig.MemoryOversubscriptionEnabled = true
	_, _, err = c.Operator().SchedulerSetConfiguration(sc.SchedulerConfig, nil)
	must.NoError(t, err)

	var files []string
	for _, dir := range roundTripDirs {
		entries, err := os.ReadDir(dir)
		must.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !(strings.HasSuffix(name, ".nomad.hcl") || strings.HasSuffix(name, ".nomad.json")) {
				continue
			}
			if _, skip := roundTripSkipped[name]; skip {
				continue
			}
			files = append(files, filepath.Join(dir, name))
		}
	}
	must.GreaterEq(t, 50, len(files), must.Sprint("the round trip needs at least 50 job files"))

	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			args := []string{"job", "run", "-output"}
			for _, v := range roundTripVars[filepath.Base(path)] {
				args = append(args, "-var", v)
			}
			code, out, errOut := run(t, "", append(args, path)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			var parsed struct{ Job *api.Job }
			must.NoError(t, json.Unmarshal([]byte(out), &parsed))
			job := parsed.Job
			id := *job.ID

			// The agent's parser says the same, for a file that needs
			// neither variables nor files next to it.
			if body, err := os.ReadFile(path); err == nil && len(roundTripVars[filepath.Base(path)]) == 0 && !bytes.Contains(body, []byte("file(")) {
				got, err := c.Jobs().ParseHCLOpts(&api.JobsParseRequest{JobHCL: string(body)})
				must.NoError(t, err)
				must.Eq(t, mustJSON(t, job), mustJSON(t, got), must.Sprint("/v1/jobs/parse and job run -output differ"))
			}

			must.SliceEmpty(t, missingOperands(job), must.Sprint("real Nomad refuses a constraint or affinity without an operator"))

			var vr api.JobValidateResponse
			must.NoError(t, roundTripPut(t, addr, "/v1/validate/job", api.JobValidateRequest{Job: job}, &vr))
			must.Eq(t, "", vr.Error)
			must.SliceEmpty(t, vr.ValidationErrors)

			if job.Namespace != nil && *job.Namespace != "" && *job.Namespace != "default" {
				_, err := c.Namespaces().Register(&api.Namespace{Name: *job.Namespace}, nil)
				must.NoError(t, err)
			}
			q := &api.QueryOptions{Namespace: strOf(job.Namespace)}
			read := func() string {
				t.Helper()
				raw, err := roundTripGet(addr, "/v1/job/"+id+"?namespace="+q.Namespace)
				must.NoError(t, err)
				return raw
			}
			must.NoError(t, roundTripPut(t, addr, "/v1/jobs", api.JobRegisterRequest{Job: job}, nil))
			first := read()
			// What was read goes back as a file of job run -json, which
			// takes every key the agent wrote.
			readFile := filepath.Join(t.TempDir(), "read.json")
			must.NoError(t, os.WriteFile(readFile, []byte(first), 0o644))
			code, out, errOut = cli(t, addr, "job", "run", "-detach", "-json", readFile)
			must.Eq(t, 0, code, must.Sprint(out, errOut))
			second := read()
			must.Eq(t, withoutServerFields(t, first), withoutServerFields(t, second))
			_, _, err = c.Jobs().Deregister(id, true, &api.WriteOptions{Namespace: q.Namespace})
			must.NoError(t, err)
		})
	}
}

// missingOperands lists the constraints and affinities of a parsed job
// that have no operator, which real Nomad's validation refuses ("Missing
// constraint operand"): its parser writes "=" for them.
func missingOperands(j *api.Job) []string {
	var out []string
	check := func(where string, cs []*api.Constraint, as []*api.Affinity) {
		for _, c := range cs {
			if c.Operand == "" {
				out = append(out, where+" constraint "+c.LTarget)
			}
		}
		for _, a := range as {
			if a.Operand == "" {
				out = append(out, where+" affinity "+a.LTarget)
			}
		}
	}
	check("job", j.Constraints, j.Affinities)
	for _, tg := range j.TaskGroups {
		check("group "+strOf(tg.Name), tg.Constraints, tg.Affinities)
		for _, t := range tg.Tasks {
			check("task "+t.Name, t.Constraints, t.Affinities)
		}
	}
	return out
}

func strOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must.NoError(t, err)
	return string(b)
}

// roundTripPut sends body as JSON and decodes the answer into out, if not nil;
// a status other than 200 is an error with the answer's text.
func roundTripPut(t *testing.T, addr, path string, body, out any) error {
	t.Helper()
	b, err := json.Marshal(body)
	must.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, addr+path, bytes.NewReader(b))
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %d %s", path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func roundTripGet(addr, path string) (string, error) {
	resp, err := http.Get(addr + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, data)
	}
	return string(data), nil
}

// withoutServerFields drops roundTripServerFields at every level of a
// job's JSON (a scaling policy's ModifyIndex too) and writes it again
// with sorted keys and the numbers as they were.
func withoutServerFields(t *testing.T, raw string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	must.NoError(t, dec.Decode(&v))
	var drop func(any)
	drop = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range roundTripServerFields {
				delete(v, k)
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				drop(v[k])
			}
		case []any:
			for _, e := range v {
				drop(e)
			}
		}
	}
	drop(v)
	b, err := json.MarshalIndent(v, "", "  ")
	must.NoError(t, err)
	return string(b)
}
