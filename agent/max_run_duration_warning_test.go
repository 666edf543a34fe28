package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/client/drivers/docker/dockertest"
)

// warnScript traps SIGUSR1, prints when it got it (unix nanoseconds) and
// the warning time its environment announced, and keeps running.
const warnScript = `trap 'echo "warned $(date +%s%N)"' USR1
echo "announced $NOMAD_ALLOC_DEADLINE_WARNING"
while true; do sleep 0.05; done`

// putJob sends a job request body as JSON to path and returns the status
// and the answer.
func putJob(t *testing.T, a *Agent, path string, body any) (int, string) {
	t.Helper()
	b, err := json.Marshal(body)
	must.NoError(t, err)
	req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+path, bytes.NewReader(b))
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, string(out)
}

// withWarning is job as the JSON API carries it, with group g asking for
// a warning before seconds ahead of its deadline.
func withWarning(t *testing.T, job *api.Job, before time.Duration, signal string) map[string]any {
	t.Helper()
	b, err := json.Marshal(job)
	must.NoError(t, err)
	var m map[string]any
	must.NoError(t, json.Unmarshal(b, &m))
	tg := m["TaskGroups"].([]any)[0].(map[string]any)
	tg["MaxRunDurationWarning"] = map[string]any{"Before": int64(before), "Signal": signal}
	return m
}

// registerWarned registers job with its warning over the JSON API and
// waits for its evaluation.
func registerWarned(t *testing.T, a *Agent, c *api.Client, job map[string]any) {
	t.Helper()
	code, out := putJob(t, a, "/v1/jobs", map[string]any{"Job": job})
	must.Eq(t, http.StatusOK, code, must.Sprint(out))
	var resp api.JobRegisterResponse
	must.NoError(t, json.Unmarshal([]byte(out), &resp))
	waitEvalTerminal(t, c, resp.EvalID)
}

// signalingEvents are the task's Signaling events.
func signalingEvents(ts *api.TaskState) []*api.TaskEvent {
	var out []*api.TaskEvent
	for _, e := range ts.Events {
		if e.Type == "Signaling" {
			out = append(out, e)
		}
	}
	return out
}

// checkWarned checks the outcome of a warned alloc that ran to its
// deadline: one Signaling event naming the deadline, sent no earlier
// than the warning time and within a second of it; the task survived it
// and the alloc ended complete by max_run_duration.
func checkWarned(t *testing.T, alloc *api.Allocation, limit, before time.Duration) {
	t.Helper()
	must.Eq(t, "complete", alloc.ClientStatus)
	must.Eq(t, maxRunReason, alloc.ClientDescription)
	deadline := time.Unix(0, alloc.CreateTime).Add(limit)
	warnAt := deadline.Add(-before)
	ts := alloc.TaskStates["main"]
	sig := signalingEvents(ts)
	must.SliceLen(t, 1, sig, must.Sprintf("events: %s", eventTypes(ts)))
	must.Eq(t, "SIGUSR1", sig[0].TaskSignal)
	must.Eq(t, "max_run_duration deadline at "+deadline.UTC().Format(time.RFC3339), sig[0].TaskSignalReason)
	late := time.Duration(sig[0].Time - warnAt.UnixNano())
	must.Between(t, 0, late, time.Second, must.Sprintf("warning sent %s after its time", late))
	var killing *api.TaskEvent
	for _, e := range ts.Events {
		if e.Type == "Killing" {
			killing = e
		}
	}
	must.NotNil(t, killing, must.Sprint("the task did not survive the warning until the deadline"))
	must.GreaterEq(t, deadline.UnixNano(), killing.Time)
}

func TestMaxRunDurationWarning_RawExec(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	const limit, before = 6 * time.Second, 3 * time.Second
	job := maxRunJob("warned", "batch", limit, warnScript)
	flags := streamWarningFlags(t, c, "warned")
	registerWarned(t, a, c, withWarning(t, job, before, "SIGUSR1"))

	alloc := onlyAlloc(t, c, "warned", isTerminal)
	checkWarned(t, alloc, limit, before)

	// The event stream marks the alloc's updates from the warning on, and
	// its end carries both marks.
	seen := <-flags
	must.SliceNotEmpty(t, seen)
	must.Eq(t, "running:false:false", seen[0], must.Sprintf("events: %v", seen))
	must.SliceContains(t, seen, "running:true:false")
	must.Eq(t, "complete:true:true", seen[len(seen)-1], must.Sprintf("events: %v", seen))

	// The trap ran once, in the task, within a second of the warning time.
	warnAt := time.Unix(0, alloc.CreateTime).Add(limit - before)
	out := taskLog(t, a, alloc.ID, "main")
	must.StrContains(t, out, "announced "+strconv.FormatInt(warnAt.Unix(), 10)+"\n")
	must.Eq(t, 1, strings.Count(out, "warned "), must.Sprint(out))
	_, got, _ := strings.Cut(out, "warned ")
	ns, err := strconv.ParseInt(strings.TrimSpace(strings.SplitN(got, "\n", 2)[0]), 10, 64)
	must.NoError(t, err, must.Sprint(out))
	late := time.Duration(ns - warnAt.UnixNano())
	must.Between(t, 0, late, time.Second, must.Sprintf("trap ran %s after the warning time", late))

	// The stored job carries the warning, as the API wrote it.
	code, body := getBody(t, a, "/v1/job/warned")
	must.Eq(t, http.StatusOK, code)
	must.StrContains(t, body, `"MaxRunDurationWarning":{"Before":3000000000,"Signal":"SIGUSR1"}`)
}

func TestMaxRunDurationWarning_Exec(t *testing.T) {
	longTest(t) // make test keeps the raw_exec case as the warning's smoke test
	a, c := execAgent(t)
	const limit, before = 6 * time.Second, 3 * time.Second
	job := maxRunJob("warned-exec", "batch", limit, "")
	job.TaskGroups[0].Tasks[0] = execTask("main", `trap 'echo warned' USR1
while true; do sleep 0.05; done`, 128)
	registerWarned(t, a, c, withWarning(t, job, before, "SIGUSR1"))
	alloc := onlyAlloc(t, c, "warned-exec", isTerminal)
	checkWarned(t, alloc, limit, before)
	must.Eq(t, "warned\n", taskLog(t, a, alloc.ID, "main"))
}

// A client restarted after the warning went out does not send it again.
func TestMaxRunDurationWarning_ClientRestart(t *testing.T) {
	longTest(t) // make test keeps the raw_exec case as the warning's smoke test
	srv := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, srv)
	dataDir := t.TempDir()
	startClient := func() *Agent {
		return NewTestAgent(t, func(c *config.Config) {
			c.DevMode = false
			c.Server.Enabled = false
			c.DataDir = dataDir
			c.Client.Servers = []string{srv.RPCAddr()}
			c.Client.Options = map[string]string{"driver.raw_exec.enable": "1"}
		})
	}
	cl := startClient()
	const limit, before = 12 * time.Second, 8 * time.Second
	job := maxRunJob("restarted", "batch", limit, warnScript)
	registerWarned(t, srv, c, withWarning(t, job, before, "SIGUSR1"))
	alloc := onlyAlloc(t, c, "restarted", isRunning)
	waitFor(t, 20*time.Second, func() error {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return err
		}
		if ts := a.TaskStates["main"]; ts == nil || len(signalingEvents(ts)) == 0 {
			return fmt.Errorf("no warning yet")
		}
		return nil
	})
	must.NoError(t, cl.Shutdown())
	cl = startClient()

	alloc = onlyAlloc(t, c, "restarted", isTerminal)
	checkWarned(t, alloc, limit, before)
	must.Eq(t, 1, strings.Count(taskLog(t, cl, alloc.ID, "main"), "warned "))
}

func TestMaxRunDurationWarning_Refused(t *testing.T) {
	a := NewTestAgent(t, nil)
	job := maxRunJob("refused", "batch", 6*time.Second, "exit 0")
	cases := []struct {
		name   string
		before time.Duration
		signal string
		err    string
	}{
		{"before not under the limit", 6 * time.Second, "SIGUSR1", `max_run_duration_warning before 6s must be less than max_run_duration 6s`},
		{"before a bare number", 3, "SIGUSR1", `max_run_duration_warning before 3 is 3ns; did you mean "3s"?`},
		{"unknown signal", time.Second, "SIGWARN", `max_run_duration_warning signal "SIGWARN" is not a known signal`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := putJob(t, a, "/v1/jobs", map[string]any{"Job": withWarning(t, job, tc.before, tc.signal)})
			must.Eq(t, http.StatusBadRequest, code)
			must.StrContains(t, out, `Task group "g": `+tc.err)
		})
	}
	code, _ := getBody(t, a, "/v1/job/refused")
	must.Eq(t, http.StatusNotFound, code, must.Sprint("a refused job is stored"))
}

// streamWarningFlags follows the job's alloc events until its alloc ends
// and sends, per event, "<client status>:<TimeoutWarning>:<Timeout>".
func streamWarningFlags(t *testing.T, c *api.Client, jobID string) <-chan []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicAllocation: {jobID}}, 0, nil)
	must.NoError(t, err)
	out := make(chan []string, 1)
	go func() {
		var seen []string
		defer func() { out <- seen }()
		for {
			var batch *api.Events
			select {
			case batch = <-stream:
			case <-ctx.Done():
				return
			}
			if batch == nil || batch.Err != nil {
				return
			}
			for _, ev := range batch.Events {
				alloc, err := ev.Allocation()
				if err != nil || alloc == nil || alloc.ClientStatus == "pending" {
					continue
				}
				warned, _ := ev.Payload["TimeoutWarning"].(bool)
				timeout, _ := ev.Payload["Timeout"].(bool)
				seen = append(seen, fmt.Sprintf("%s:%t:%t", alloc.ClientStatus, warned, timeout))
				if alloc.ClientStatus == "complete" {
					return
				}
			}
		}
	}()
	return out
}

// getBody GETs path from the agent's HTTP API.
func getBody(t *testing.T, a *Agent, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(a.HTTPAddr() + path)
	must.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, string(b)
}

func eventTypes(ts *api.TaskState) string {
	var out []string
	for _, e := range ts.Events {
		out = append(out, e.Type+"("+e.DisplayMessage+")")
	}
	return strings.Join(out, ", ")
}

// The warning reaches a docker task through the engine's signal path.
func TestMaxRunDurationWarning_Docker(t *testing.T) {
	longTest(t) // make test keeps the raw_exec case as the warning's smoke test
	e := dockertest.StartT(t)
	t.Setenv("DOCKER_HOST", e.Host)
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	waitFor(t, 30*time.Second, func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Drivers["docker"] == nil || !nodes[0].Drivers["docker"].Healthy {
			return fmt.Errorf("no node with a healthy docker driver yet")
		}
		return nil
	})
	const limit, before = 8 * time.Second, 4 * time.Second
	job := maxRunJob("warned-docker", "batch", limit, "")
	job.TaskGroups[0].Tasks[0] = dockerTask("main", `trap 'echo warned' USR1
while true; do sleep 1; done`, 32)
	registerWarned(t, a, c, withWarning(t, job, before, "SIGUSR1"))
	alloc := onlyAlloc(t, c, "warned-docker", isTerminal)
	checkWarned(t, alloc, limit, before)
	must.Eq(t, "warned\n", taskLog(t, a, alloc.ID, "main"))
}

// longTest skips t unless NOMADQ_E2E_LONG=1 (make e2e-long): the
// warning's variants beyond the raw_exec smoke test run there.
func longTest(t *testing.T) {
	t.Helper()
	if os.Getenv("NOMADQ_E2E_LONG") != "1" {
		t.Skip("long: set NOMADQ_E2E_LONG=1 (make e2e-long)")
	}
}
