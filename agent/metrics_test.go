package agent

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// scrape reads /v1/metrics?format=prometheus as series line -> value
// text, comments dropped.
func scrape(t *testing.T, a *Agent) map[string]string {
	t.Helper()
	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	out := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndex(line, " ")
		out[line[:i]] = line[i+1:]
	}
	must.NoError(t, sc.Err())
	return out
}

// hasSeries reports whether some series of the family (name, or name
// with labels) is in the scrape.
func hasSeries(s map[string]string, name string) bool {
	for k := range s {
		if k == name || strings.HasPrefix(k, name+"{") {
			return true
		}
	}
	return false
}

func TestMetrics_JSONShape(t *testing.T) {
	a := NewTestAgent(t, nil)
	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics")
	must.NoError(t, err)
	defer resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	var body map[string]json.RawMessage
	must.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	for _, k := range []string{"Timestamp", "Gauges", "Counters", "Samples", "Points"} {
		must.MapContainsKey(t, body, k)
	}
	var gauges []struct {
		Name   string
		Value  float64
		Labels map[string]string
	}
	must.NoError(t, json.Unmarshal(body["Gauges"], &gauges))
	names := map[string]bool{}
	for _, g := range gauges {
		names[g.Name] = true
	}
	for _, n := range []string{"nomad.nomad.broker.total_ready", "nomad.nomad.broker.total_unacked", "nomad.nomad.broker.total_blocked",
		"nomad.nomad.blocked_evals.total_blocked", "nomad.nomad.heartbeat.active", "nomad.client.allocations.running", "nomad.client.unallocated.memory"} {
		must.MapContainsKey(t, names, n)
	}
}

func TestMetrics_PrometheusDisabled(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Telemetry.PrometheusMetrics = false })
	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
	must.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	must.Eq(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	must.StrContains(t, string(body), "prometheus_metrics = true")
}

func TestMetrics_ServerClientAndHTTPSeries(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	_, _, err := c.Jobs().Register(mockJob("series", 1), nil)
	must.NoError(t, err)
	// Each series appears when its step has finished: the worker's
	// invoke_scheduler sample lands only after the plan it submitted was
	// applied, so wait for every family rather than for the plan alone.
	want := []string{
		"nomad_nomad_plan_apply", "nomad_nomad_raft_apply",
		"nomad_nomad_broker_total_ready", "nomad_nomad_broker_total_unacked", "nomad_nomad_broker_total_blocked",
		"nomad_nomad_broker_total_waiting", "nomad_nomad_blocked_evals_total_blocked", "nomad_nomad_heartbeat_active",
		"nomad_nomad_plan_evaluate", "nomad_nomad_worker_dequeue_eval", "nomad_nomad_worker_invoke_scheduler_batch",
		"nomad_client_allocations_running", "nomad_client_allocated_memory", "nomad_client_unallocated_cpu",
		"nomad_nomad_job_summary_running",
	}
	var missing []string
	var s map[string]string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		s = scrape(t, a)
		missing = missing[:0]
		for _, name := range want {
			if !hasSeries(s, name) {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)), must.Func(func() string {
		return "no series " + strings.Join(missing, ", ")
	}))
	must.MapContainsKey(t, s, `nomad_http_request_duration_seconds_count{method="PUT",route="/v1/jobs"}`)
	// Aggregated by default: no job label on job summaries.
	for k := range s {
		if strings.HasPrefix(k, "nomad_nomad_job_summary_") {
			must.StrNotContains(t, k, "job=")
		}
	}
}

// A job's per-job series are gone from the first scrape after the job is
// purged: nothing is kept between scrapes.
func TestMetrics_PerJobSeriesEndWithTheJob(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Telemetry.PublishJobMetrics = true })
	c := apiClient(t, a)
	job := mockJob("ghost", 1)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "30s"}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	series := `nomad_nomad_job_summary_running{job="ghost",namespace="default",task_group="g"}`
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return scrape(t, a)[series] == "1"
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	_, _, err = c.Jobs().Deregister("ghost", true, nil)
	must.NoError(t, err)
	s := scrape(t, a)
	for k := range s {
		must.StrNotContains(t, k, `job="ghost"`)
	}
}

func TestMetrics_PrefixFilter(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Telemetry.PrefixFilter = []string{"-nomad.client", "+nomad.client.allocations"}
	})
	s := scrape(t, a)
	must.True(t, hasSeries(s, "nomad_client_allocations_running"))
	must.False(t, hasSeries(s, "nomad_client_unallocated_cpu"))
	must.True(t, hasSeries(s, "nomad_nomad_broker_total_ready"))
}

func TestPrefixFilter(t *testing.T) {
	f := newPrefixFilter([]string{"-nomad.client", "+nomad.client.allocations", "-nomad.nomad.job_summary"}, nil)
	cases := []struct {
		name string
		want bool
	}{
		{"nomad.nomad.broker.total_ready", true},
		{"nomad.client.unallocated.cpu", false},
		{"nomad.client.allocations.running", true},
		{"nomad.nomad.job_summary.running", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, f.allowed(tc.name))
			must.Eq(t, tc.want, f.allowedProm(promName(tc.name)))
		})
	}
	must.True(t, f.allowedProm("go_goroutines"))
	off := false
	must.False(t, newPrefixFilter(nil, &off).allowed("nomad.nomad.broker.total_ready"))
}

// go-metrics gauges of single allocs stay out of Prometheus, where they
// would linger a minute after their alloc; other gauges pass.
func TestPromSinkDropsPerAllocGauges(t *testing.T) {
	tel, err := newTelemetry(&config.Telemetry{})
	must.NoError(t, err)
	tel.metrics.SetGauge([]string{"client", "allocs", "max_run_duration", "remaining_seconds"}, 5)
	tel.metrics.SetGauge([]string{"nomad", "batch_queue", "depth"}, 3)
	mfs, err := tel.registry.Gather()
	must.NoError(t, err)
	var names []string
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "nomad_") {
			names = append(names, mf.GetName())
		}
	}
	must.SliceContainsFunc(t, names, "batch_queue_depth", func(n, suffix string) bool { return strings.HasSuffix(n, suffix) })
	for _, n := range names {
		// The warnings counter is declared up front; the per-alloc
		// gauges must not be there.
		must.StrNotContains(t, n, "max_run_duration_remaining_seconds")
	}
}
