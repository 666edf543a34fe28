package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/jobspec"
)

// loggedServerAgent starts a server-only dev agent (no client, so nothing
// a test registers is run) whose log the test reads, at INFO level.
func loggedServerAgent(t *testing.T) (*Agent, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	a, err := StartLocal(func(c *config.Config) {
		c.Client.Enabled = false
		c.LogLevel = "INFO"
	}, io.MultiWriter(log, testLogOutput()), 60*time.Second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
	return a, log
}

// jsonVariant is a job body with one place changed.
type jsonVariant struct {
	desc string
	job  any
	// null is set when the change puts null into an entry of a list of
	// objects, which every decode path refuses naming it.
	null string
}

// jsonVariants makes, for every value in the JSON tree v (at path), the
// tree with that value set to null, to its kind's empty value, and for a
// list, to a list of one null entry.
func jsonVariants(v any, path string, replace func(any) any, out *[]jsonVariant) {
	add := func(desc string, nv any, null string) {
		*out = append(*out, jsonVariant{desc: path + " = " + desc, job: replace(nv), null: null})
	}
	if path != "" {
		add("null", nil, "")
	}
	switch x := v.(type) {
	case map[string]any:
		if path != "" {
			add("{}", map[string]any{}, "")
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			jsonVariants(x[k], joinPath(path, k), func(nv any) any {
				c := cloneJSON(x)
				c[k] = nv
				return replace(c)
			}, out)
		}
	case []any:
		add("[]", []any{}, "")
		// A list of pointers refuses a null entry by name; in a list of
		// strings, numbers or plain structs null decodes to a zero
		// value, which validation judges like any other.
		null := ""
		if listOfPointers(reflect.TypeFor[api.Job](), path) {
			null = path + "[0]"
		}
		add("[null]", []any{nil}, null)
		for i := range x {
			jsonVariants(x[i], fmt.Sprintf("%s[%d]", path, i), func(nv any) any {
				c := append([]any(nil), x...)
				c[i] = nv
				return replace(c)
			}, out)
		}
	case string:
		add(`""`, "", "")
	case float64:
		add("0", float64(0), "")
		add("-1", float64(-1), "")
	case bool:
		add("false", false, "")
	}
}

// listOfPointers reports whether the JSON path (from jsonVariants) names,
// in a value of type t, a list whose entries are pointers.
func listOfPointers(t reflect.Type, path string) bool {
	for _, part := range strings.Split(path, ".") {
		name, _, indexed := strings.Cut(part, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		f, ok := fieldByJSONName(t, name)
		if !ok {
			return false
		}
		t = f.Type
		if indexed {
			t = t.Elem()
		}
	}
	return (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) && t.Elem().Kind() == reflect.Pointer
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		if f := t.Field(i); jsonName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func cloneJSON(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// richJobJSON is testdata/rich.nomad.hcl, a valid job with a field or
// block at most places, as the API carries it, canonicalized so every
// field is present.
func richJobJSON(t *testing.T) map[string]any {
	t.Helper()
	f, err := os.Open("testdata/rich.nomad.hcl")
	must.NoError(t, err)
	defer f.Close()
	job, err := jobspec.Parse("rich.nomad.hcl", f)
	must.NoError(t, err)
	job.Canonicalize()
	b, err := json.Marshal(job)
	must.NoError(t, err)
	var tree map[string]any
	must.NoError(t, json.Unmarshal(b, &tree))
	return tree
}

// TestJobBody_NullsAndEmptiesInEveryField sends the job body with each of
// its fields in turn set to null, to an empty value, to a negative
// number, and each list to [null], to every path that decodes a job
// (validate, plan, register). None may fail the server: every answer is
// below 500, a list entry set to null is a 400 naming it, and the agent
// logs no panic.
func TestJobBody_NullsAndEmptiesInEveryField(t *testing.T) {
	a, log := loggedServerAgent(t)
	tree := richJobJSON(t)
	var variants []jsonVariant
	jsonVariants(tree, "", func(v any) any { return v }, &variants)
	must.Greater(t, 300, len(variants), must.Sprint("a walk of the whole job body"))
	t.Logf("%d variants", len(variants))

	send := func(method, path string, body []byte) (int, string) {
		req, err := http.NewRequest(method, a.HTTPAddr()+path, bytes.NewReader(body))
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err, must.Sprintf("%s %s: no answer", method, path))
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	routes := []string{"/v1/validate/job", "/v1/job/rich/plan", "/v1/jobs"}
	for _, v := range variants {
		body, err := json.Marshal(map[string]any{"Job": v.job})
		must.NoError(t, err)
		for _, route := range routes {
			code, answer := send(http.MethodPut, route, body)
			must.Less(t, 500, code, must.Sprintf("PUT %s with %s: %d %s", route, v.desc, code, answer))
			if v.null != "" {
				must.Eq(t, http.StatusBadRequest, code, must.Sprintf("PUT %s with %s: %s", route, v.desc, answer))
				must.StrContains(t, answer, "Job."+v.null+" is null", must.Sprintf("PUT %s with %s", route, v.desc))
			}
		}
	}
	must.StrNotContains(t, strings.ToLower(log.String()), "panic")
}

// TestNullEntry_NamesTheEntry: the decoder's walk names the first null
// list entry or map value of an object type, and lets nulls pass where
// they mean "absent" (a pointer field) or are a driver's to judge.
func TestNullEntry_NamesTheEntry(t *testing.T) {
	name := "g"
	cases := []struct {
		name string
		body api.JobRegisterRequest
		want string
	}{
		{"no job", api.JobRegisterRequest{}, ""},
		{"null group", api.JobRegisterRequest{Job: &api.Job{TaskGroups: []*api.TaskGroup{{Name: &name}, nil}}}, "Job.TaskGroups[1]"},
		{"null task", api.JobRegisterRequest{Job: &api.Job{TaskGroups: []*api.TaskGroup{{Tasks: []*api.Task{nil}}}}}, "Job.TaskGroups[0].Tasks[0]"},
		{"null volume", api.JobRegisterRequest{Job: &api.Job{TaskGroups: []*api.TaskGroup{{Volumes: map[string]*api.VolumeRequest{"data": nil}}}}}, `Job.TaskGroups[0].Volumes["data"]`},
		{"null constraint", api.JobRegisterRequest{Job: &api.Job{Constraints: []*api.Constraint{nil}}}, "Job.Constraints[0]"},
		{"null in driver config", api.JobRegisterRequest{Job: &api.Job{TaskGroups: []*api.TaskGroup{{Tasks: []*api.Task{{Config: map[string]any{"args": []any{nil}}}}}}}}, ""},
		{"absent blocks", api.JobRegisterRequest{Job: &api.Job{Periodic: nil, TaskGroups: []*api.TaskGroup{{RestartPolicy: nil}}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, nullEntry(reflect.ValueOf(&tc.body), ""))
		})
	}
}
