package agent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
)

func TestHTTP_BadInputChangesNothing(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.MaxRequestBody = 1 << 20 })
	base := a.HTTPAddr()

	goodJob, err := json.Marshal(map[string]any{"Job": mockJob("ok", 1)})
	must.NoError(t, err)
	badType := strings.Replace(string(goodJob), `"Priority":50`, `"Priority":"high"`, 1)
	must.StrContains(t, badType, `"Priority":"high"`)
	invalidJob := strings.Replace(string(goodJob), `"Type":"batch"`, `"Type":"nope"`, 1)

	cases := []struct {
		name   string
		method string
		path   string
		body   string
		code   int
		msg    string
	}{
		{"malformed JSON", "PUT", "/v1/jobs", `{"Job": {`, 400, "malformed JSON"},
		{"wrong type", "PUT", "/v1/jobs", badType, 400, `field "Job.Priority" must be int`},
		{"empty body", "PUT", "/v1/jobs", ``, 400, "Request body is empty"},
		{"no job", "PUT", "/v1/jobs", `{"Submission": null}`, 400, "Job must be specified"},
		{"no job ID", "PUT", "/v1/jobs", `{"Job": {"Name": "x"}}`, 400, "Job ID hasn't been provided"},
		{"invalid job", "PUT", "/v1/jobs", invalidJob, 400, `nope`},
		{"ID mismatch", "PUT", "/v1/job/other", string(goodJob), 400, "Job ID does not match name"},
		{"eval priority", "PUT", "/v1/jobs", strings.TrimSuffix(string(goodJob), "}") + `,"EvalPriority":500}`, 400, "Eval priority must be between 1 and 100"},
		{"bad index", "GET", "/v1/jobs?index=abc", "", 400, `Invalid index: "abc"`},
		{"bad wait", "GET", "/v1/jobs?index=1&wait=forever", "", 400, `Invalid wait time: "forever"`},
		{"bad stale", "GET", "/v1/jobs?stale=maybe", "", 400, `Invalid stale value "maybe"`},
		{"bad per_page", "GET", "/v1/jobs?per_page=-3", "", 400, `Invalid per_page`},
		{"bad filter", "GET", "/v1/jobs?filter=ID%20%3D%3D", "", 400, `Invalid filter expression`},
		{"unknown path", "GET", "/v1/nope", "", 404, "no endpoint /v1/nope"},
		{"unknown job suffix", "GET", "/v1/job/ok/nope", "", 404, "no endpoint /v1/job/ok/nope"},
		{"wrong method", "DELETE", "/v1/jobs", "", 405, "Invalid method"},
		{"unknown job", "GET", "/v1/job/missing", "", 404, "job not found"},
		{"unknown eval", "GET", "/v1/evaluation/5e4c2a1b-0000-0000-0000-000000000000", "", 404, "eval not found"},
		{"unknown alloc", "GET", "/v1/allocation/5e4c2a1b-0000-0000-0000-000000000000", "", 404, "alloc not found"},
		{"unknown node", "GET", "/v1/node/5e4c2a1b-0000-0000-0000-000000000000", "", 404, "node not found"},
		{"unknown summary", "GET", "/v1/job/missing/summary", "", 404, "job not found"},
		{"oversized body", "PUT", "/v1/jobs", `{"Job": {"ID": "big", "Meta": {"k": "` + strings.Repeat("x", 2<<20) + `"}}}`, 413, "Request body too large"},
		{"bad scheduler config", "PUT", "/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm": "random"}`, 400, `SchedulerAlgorithm "random" is not allowed`},
		{"bad batch queue order", "PUT", "/v1/operator/scheduler/configuration", `{"BatchQueue": {"Order": "lifo"}}`, 400, `BatchQueue.Order "lifo" is not allowed: must be "fifo", "priority", "fair" or "multifactor"`},
		{"bad batch queue backfill", "PUT", "/v1/operator/scheduler/configuration", `{"BatchQueue": {"Order": "fair", "Backfill": "yes"}}`, 400, `BatchQueue.Backfill`},
		{"bad batch queue timeout", "PUT", "/v1/operator/scheduler/configuration", `{"BatchQueue": {"WorkloadTimeout": "soon"}}`, 400, `BatchQueue.WorkloadTimeout "soon" is not a duration`},
		{"bad batch queue type", "PUT", "/v1/operator/scheduler/configuration", `{"BatchQueue": {"ConcurrentPlacements": "two"}}`, 400, `field "BatchQueue.ConcurrentPlacements" must be int`},
		{"search without context", "PUT", "/v1/search", `{"Prefix": "x"}`, 400, "Context must be specified"},
		{"bad purge", "DELETE", "/v1/job/ok?purge=perhaps", "", 400, `"purge"`},
		{"parse error", "PUT", "/v1/jobs/parse", `{"JobHCL": "job {"}`, 400, "Failed to parse job"},
	}
	// The indexes of the tables a bad request could write. The whole
	// store's index is not compared: the leader and the client write on
	// their own meanwhile (keyring, node updates).
	index := func() map[string]uint64 {
		out := map[string]uint64{}
		for _, table := range []string{"jobs", "job_version", "job_summary", "evals", "allocs", "scheduler_config", "job_submission"} {
			i, err := a.server.State().Index(table)
			must.NoError(t, err)
			out[table] = i
		}
		return out
	}
	before := index()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(tc.method, base+tc.path, body)
			must.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			must.NoError(t, err)
			defer resp.Body.Close()
			msg, _ := io.ReadAll(resp.Body)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprintf("body: %s", msg))
			must.StrContains(t, string(msg), tc.msg)
			must.StrHasPrefix(t, "text/plain", resp.Header.Get("Content-Type"))
		})
	}
	must.Eq(t, before, index(), must.Sprint("a rejected request changed the state"))

	// The official client sends fields nomadq does not implement; they are
	// ignored, not rejected.
	extra := strings.TrimSuffix(string(goodJob), "}") + `,"Submission":{"Source":"job {}","Format":"hcl2"},"PreserveResources":true,"SomethingNew":1}`
	resp, err := http.Post(base+"/v1/jobs", "application/json", strings.NewReader(extra))
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, 200, resp.StatusCode)

	// Gzip when the client accepts it.
	req, _ := http.NewRequest("GET", base+"/v1/job/ok", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	resp, err = (&http.Client{Transport: tr}).Do(req)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, "gzip", resp.Header.Get("Content-Encoding"))
	must.NotEq(t, "", resp.Header.Get("X-Nomad-Index"))
	must.Eq(t, "true", resp.Header.Get("X-Nomad-KnownLeader"))
	must.Eq(t, "0", resp.Header.Get("X-Nomad-LastContact"))

	// The JSON buffers and gzip writers are pooled: many compressed and
	// plain responses at once each decode to the job, whole.
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", base+"/v1/job/ok", nil)
			if i%2 == 0 {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			must.NoError(t, err)
			defer resp.Body.Close()
			var body io.Reader = resp.Body
			if i%2 == 0 {
				must.Eq(t, "gzip", resp.Header.Get("Content-Encoding"))
				gz, err := gzip.NewReader(resp.Body)
				must.NoError(t, err)
				body = gz
			}
			var job api.Job
			must.NoError(t, json.NewDecoder(body).Decode(&job))
			must.Eq(t, "ok", *job.ID)
		}()
	}
	wg.Wait()
}

// BenchmarkHTTPJobRegister registers jobs over HTTP with 16 concurrent
// clients and reports registrations per second and p50/p99 latency.
//
//	go test -run '^$' -bench HTTPJobRegister -benchtime 2000x ./agent
func BenchmarkHTTPJobRegister(b *testing.B) {
	a := NewTestAgent(b, nil)
	const clients = 16
	body := func(i int) []byte {
		job := mockJob(fmt.Sprintf("bench-%d", i), 1)
		job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1ms"}
		buf, _ := json.Marshal(map[string]any{"Job": job})
		return buf
	}
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		next      int
	)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= b.N {
					return
				}
				payload := body(i)
				t0 := time.Now()
				resp, err := httpc.Post(a.HTTPAddr()+"/v1/jobs", "application/json", bytes.NewReader(payload))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	if len(latencies) == 0 {
		return
	}
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "registrations/s")
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	_ = api.JobRegisterRequest{}
}

// Refusals the server makes cross RPC as coded errors and keep their
// status: a lost check-index race, a force launch of a job that is not
// periodic, a search context that does not exist are 400s; stopping a
// job that does not exist answers with empty fields, as Nomad does.
func TestHTTP_ServerRefusals(t *testing.T) {
	a := NewTestAgent(t, nil)
	base := a.HTTPAddr()
	code, _, body := httpPut(t, base+"/v1/jobs", map[string]any{"Job": mockJob("plain", 1)})
	must.Eq(t, http.StatusOK, code, must.Sprint(body))

	cases := []struct {
		name, path string
		body       any
		code       int
		msg        string
	}{
		{"check-index on a new job", "/v1/jobs", map[string]any{"Job": mockJob("fresh", 1), "EnforceIndex": true, "JobModifyIndex": 5},
			400, "Enforcing job modify index 5: job does not exist"},
		{"check-index on an existing job", "/v1/jobs", map[string]any{"Job": mockJob("plain", 1), "EnforceIndex": true},
			400, "Enforcing job modify index 0: job already exists"},
		{"force a job that is not periodic", "/v1/job/plain/periodic/force", nil, 400, `can't force launch non-periodic job "plain"`},
		{"force a job that does not exist", "/v1/job/missing/periodic/force", nil, 404, `job "missing" not found`},
		{"prefix search context", "/v1/search", map[string]any{"Prefix": "p", "Context": "planets"}, 400, `context must be one of`},
		{"fuzzy search context", "/v1/search/fuzzy", map[string]any{"Text": "pl", "Context": "planets"}, 400, `context must be one of`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := httpPut(t, base+tc.path, tc.body)
			must.Eq(t, tc.code, code, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
			must.StrNotContains(t, body, "RPC Error")
		})
	}

	code, body = httpDo(t, http.MethodDelete, base+"/v1/job/missing")
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	must.StrContains(t, body, `"EvalID":""`)
}
