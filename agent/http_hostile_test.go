package agent

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// hostileBodies are request bodies a careless or hostile client sends:
// wrong JSON types, nulls, huge and negative numbers, deep nesting,
// unicode, path segments and NUL bytes where IDs go.
func hostileBodies() []string {
	deepList := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	deepObject := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	job := func(fields string) string {
		return `{"Job": {"ID": "hostile", "Name": "hostile", "Type": "batch", "Datacenters": ["nowhere"], ` + fields + `}}`
	}
	group := func(fields string) string {
		return job(`"TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver", "Config": {"run_for": "1s"}}], ` + fields + `}]`)
	}
	return []string{
		``, ` `, `null`, `[]`, `{}`, `"text"`, `12`, `true`, `{`, `{"Job": `, `{"Job": {"ID": "x"`,
		`[null]`, `{"Job": null}`, `{"Job": []}`, `{"Job": "x"}`, `{"Job": 1}`,
		`{"Job": {"TaskGroups": [null]}}`, `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [null]}]}}`,
		`{"Job": {"ID": "x", "TaskGroups": {"a": 1}}}`, `{"Job": {"ID": "x", "Meta": [1, 2]}}`,
		`{"Job": {"ID": "x", "Priority": "high"}}`, `{"Job": {"ID": "x", "Priority": 1e300}}`,
		`{"Job": {"ID": "x", "Priority": -9223372036854775809}}`,
		group(`"Count": 2147483648`), group(`"Count": -1`), group(`"Count": 1e20`), group(`"Count": 9223372036854775807`),
		group(`"Count": 1.5`), group(`"Count": "3"`),
		job(`"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver", "Resources": {"CPU": -5, "MemoryMB": 9223372036854775807}}]}]`),
		job(`"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver", "KillTimeout": -1}]}]`),
		group(`"Constraints": [null, {"LTarget": "${attr.kernel.name}", "Operand": "regexp", "RTarget": "(((("}]`),
		group(`"Meta": {"k": [1]}`), group(`"Volumes": {"v": null}`),
		`{"Job": {"ID": "../../etc/passwd", "TaskGroups": []}}`, `{"Job": {"ID": "a\u0000b"}}`,
		`{"Job": {"ID": "☃☃☃", "Name": "\ud800"}}`, `{"Job": {"ID": "` + strings.Repeat("x", 100000) + `"}}`,
		`{"Name": null}`, `{"Name": "../x"}`, `{"Name": "a\u0000b"}`, `{"Name": "` + strings.Repeat("n", 5000) + `"}`,
		`{"Items": null}`, `{"Items": {"a": null}}`, `{"Items": [1]}`, `{"Path": "../../x", "Items": {"a": "b"}}`,
		`{"Rules": null}`, `{"Rules": "namespace \"x\" { policy = "}`, `{"Policies": [null]}`,
		`{"DrainSpec": {"Deadline": -1}}`, `{"DrainSpec": null, "MarkEligible": "yes"}`, `{"Eligibility": "maybe"}`,
		`{"Count": -1}`, `{"Count": 2147483648}`, `{"Count": null, "Target": null}`, `{"Target": {"Group": null}}`,
		`{"Payload": "not base64!", "Meta": {"a": 1}}`, `{"JobVersion": -1}`, `{"JobVersion": 1e30}`,
		`{"BatchQueue": {"ConcurrentPlacements": 0}}`, `{"BatchQueue": {"ConcurrentPlacements": -1}}`,
		`{"BatchQueue": null, "SchedulerAlgorithm": "lottery"}`, `{"BatchQueue": {"Order": "random"}}`,
		`{"Prefix": null, "Context": "everything"}`, `{"Text": "", "Context": 5}`,
		`{"JobSpecification": null}`, `{"JobHCL": "job \"x\" { group \"g\" { count = 1e20 } }"}`,
		`{"JobHCL": "job {"}`, `{"JobHCL": "` + strings.Repeat(`job \"x\" {`, 1000) + `"}`,
		`{"Evals": [null], "Filter": "((("}`, `{"Filter": "` + strings.Repeat("(", 5000) + `"}`,
		deepList, deepObject,
	}
}

// hostileWrites are the routes that change state, each of which must
// refuse every hostile body.
var hostileWrites = []struct{ method, path string }{
	{"PUT", "/v1/jobs"}, {"PUT", "/v1/job/hostile"}, {"PUT", "/v1/job/hostile/plan"},
	{"PUT", "/v1/job/hostile/dispatch"}, {"PUT", "/v1/job/hostile/scale"},
	{"PUT", "/v1/job/hostile/revert"}, {"PUT", "/v1/job/hostile/stable"},
	{"PUT", "/v1/namespace"}, {"PUT", "/v1/namespace/hostile"},
	{"PUT", "/v1/acl/policy/hostile"}, {"PUT", "/v1/acl/token"},
	{"PUT", "/v1/node/pool/hostile"}, {"DELETE", "/v1/evaluations"}, {"PUT", "/v1/queue/job/hostile/hold"},
}

// hostileTolerant are routes for which some hostile bodies are a valid
// request: every field of the body is optional (an object with none of
// its fields is one), or the route only reads. They may accept; they may
// not fail, and what they refuse changes nothing. The last, evaluate,
// starts work that goes on after its answer, so the state is not
// watched from it on.
var hostileTolerant = []struct{ method, path string }{
	{"PUT", "/v1/validate/job"}, {"PUT", "/v1/jobs/parse"}, {"PUT", "/v1/search"}, {"PUT", "/v1/search/fuzzy"},
	{"PUT", "/v1/var/hostile/a"}, {"PUT", "/v1/operator/scheduler/configuration"},
	{"PUT", "/v1/operator/autopilot/configuration"}, {"PUT", "/v1/job/hostile/evaluate"},
}

// hostileReads are reads by ID and listings, with hostile IDs put in
// for {id} and hostile query parameters appended.
var hostileReads = []string{
	"/v1/job/{id}", "/v1/job/{id}/allocations", "/v1/job/{id}/versions", "/v1/job/{id}/submission?version={id}",
	"/v1/allocation/{id}", "/v1/evaluation/{id}", "/v1/evaluation/{id}/allocations", "/v1/node/{id}",
	"/v1/node/{id}/allocations", "/v1/namespace/{id}", "/v1/var/{id}", "/v1/scaling/policy/{id}",
	"/v1/acl/policy/{id}", "/v1/acl/token/{id}", "/v1/node/pool/{id}", "/v1/queue/jobs?job_id={id}",
	"/v1/client/fs/ls/{id}?path={id}", "/v1/client/fs/cat/{id}?path=../../../../etc/passwd",
	"/v1/client/fs/logs/{id}?task={id}&type={id}", "/v1/client/allocation/{id}/stats",
	"/v1/jobs?prefix={id}", "/v1/allocations?prefix={id}", "/v1/evaluations?prefix={id}",
	"/v1/search/fuzzy?text={id}",
}

var hostileIDs = []string{
	"..%2F..%2Fetc%2Fpasswd", "../../etc/passwd", "%00", "a%00b", "%E2%98%83", "%ED%A0%80", "%FF%FE",
	strings.Repeat("a", 10000), "'%20OR%201=1--", "*", "%2A", "-1", "18446744073709551616", "%25",
}

var hostileParams = []string{
	"index=-1", "index=abc", "index=18446744073709551616", "wait=abc", "wait=-5s", "wait=1e9h",
	"per_page=-1", "per_page=99999999999999999999", "next_token=../../x",
	"namespace=..%2Fx", "namespace=%00", "region=nowhere", "stale=maybe", "prefix=%00", "resources=perhaps",
	"index=18446744073709551615&wait=50ms",
}

// TestHTTP_HostileRequests sends some hundreds of malformed bodies,
// IDs and query parameters over the /v1 routes of an agent with a server
// and a client: none may be answered with a 5xx or after more than 20 s
// (a ceiling for a hang, not a speed bound: under -race on a loaded
// machine a request takes seconds), the agent logs no panic, and a
// refused request changes nothing in the state store (its latest index
// stays where it was).
func TestHTTP_HostileRequests(t *testing.T) {
	log := &logBuffer{}
	a, err := StartLocal(func(c *config.Config) { c.LogLevel = "INFO" }, io.MultiWriter(log, testLogOutput()), 60*time.Second)
	must.NoError(t, err)
	t.Cleanup(func() { _ = a.ShutdownKillingTasks() })
	st := a.Server().State()
	// A job whose name the hostile writes reuse, so revert, scale and
	// the others reach their decoding and checks, not only a 404.
	good := `{"Job": {"ID": "hostile", "Name": "hostile", "Type": "batch", "Datacenters": ["nowhere"], "TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver", "Config": {"run_for": "1s"}}]}]}}`
	resp, err := http.Post(a.HTTPAddr()+"/v1/jobs", "application/json", strings.NewReader(good))
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	// Its evaluation settles (blocked: no datacenter "nowhere") before the
	// state index is watched.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		evals, err := st.EvalsByJob(nil, structs.DefaultNamespace, "hostile")
		must.NoError(t, err)
		blocked := false
		for _, e := range evals {
			if e.Status == structs.EvalStatusPending {
				return false
			}
			blocked = blocked || e.Status == structs.EvalStatusBlocked
		}
		return blocked
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))

	client := &http.Client{Timeout: 30 * time.Second}
	sent := 0
	const (
		mayAccept = iota
		mustRefuse
		unwatched
	)
	call := func(method, path string, body []byte, expect int) {
		t.Helper()
		before, err := st.LatestIndex()
		must.NoError(t, err)
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(method, a.HTTPAddr()+path, rd)
		if err != nil {
			return // a URL Go's client will not send is no request
		}
		start := time.Now()
		resp, err := client.Do(req)
		took := time.Since(start)
		// The name is shown through the assertions' own formatting,
		// which reads a % in it as a verb.
		name := strings.ReplaceAll(fmt.Sprintf("%s %.200s with %.200q", method, path, body), "%", "%%")
		must.NoError(t, err, must.Sprint(name))
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sent++
		must.Less(t, 500, resp.StatusCode, must.Sprintf("%s: %d %.300s", name, resp.StatusCode, answer))
		must.Less(t, 20*time.Second, took, must.Sprintf("%s took %s", name, took))
		if expect == mustRefuse {
			must.Between(t, 400, resp.StatusCode, 499, must.Sprintf("%s: a hostile write must be refused, got %d %.300s", name, resp.StatusCode, answer))
		}
		if resp.StatusCode >= 400 && expect != unwatched {
			after, err := st.LatestIndex()
			must.NoError(t, err)
			must.Eq(t, before, after, must.Sprintf("%s was refused (%d %.200s) but the state changed", name, resp.StatusCode, answer))
		}
	}

	for _, w := range hostileWrites {
		for _, body := range hostileBodies() {
			call(w.method, w.path, []byte(body), mustRefuse)
		}
	}
	for _, r := range hostileReads {
		for _, id := range hostileIDs {
			call(http.MethodGet, strings.ReplaceAll(r, "{id}", id), nil, mayAccept)
		}
		for _, p := range hostileParams {
			path := strings.ReplaceAll(r, "{id}", "hostile")
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			call(http.MethodGet, path+sep+p, nil, mayAccept)
		}
	}
	// Listings with every hostile parameter, and filters that do not
	// parse. (go-bexpr spends some 80 ms of CPU refusing any of them;
	// they are sent to the listings only, to keep this test short.)
	for _, p := range append(hostileParams, "filter=((((", "filter="+strings.Repeat("(", 300)) {
		for _, l := range []string{"/v1/jobs", "/v1/allocations", "/v1/evaluations", "/v1/nodes", "/v1/vars", "/v1/namespaces", "/v1/queue/jobs", "/v1/acl/policies"} {
			call(http.MethodGet, l+"?"+p, nil, mayAccept)
		}
	}
	for i, w := range hostileTolerant {
		expect := mayAccept
		if i == len(hostileTolerant)-1 {
			expect = unwatched
		}
		for _, body := range hostileBodies() {
			call(w.method, w.path, []byte(body), expect)
		}
	}
	t.Logf("%d hostile requests answered", sent)
	must.Greater(t, 300, sent)

	// The one job is as it was registered.
	job, err := st.JobByID(nil, structs.DefaultNamespace, "hostile")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.Eq(t, 0, int(job.Version))
	must.Eq(t, 1, job.TaskGroups[0].Count)
	logged := strings.ToLower(log.String())
	must.StrNotContains(t, logged, "panic")
}
