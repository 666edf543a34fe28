//go:build linux

package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestRealPrometheus scrapes a dev agent with a real Prometheus server,
// as an operator's would. scripts/test-prometheus.sh (make
// test-prometheus, part of make test) installs Debian's prometheus
// package when it is missing and runs this test with
// NOMADQ_PROMETHEUS=1.
func TestRealPrometheus(t *testing.T) {
	if os.Getenv("NOMADQ_PROMETHEUS") != "1" {
		t.Skip("needs prometheus and promtool: run make test-prometheus (NOMADQ_PROMETHEUS=1)")
	}
	promtool, err := exec.LookPath("promtool")
	must.NoError(t, err, must.Sprint("promtool not installed: apt-get install -y prometheus"))
	promBin, err := exec.LookPath("prometheus")
	must.NoError(t, err, must.Sprint("prometheus not installed: apt-get install -y prometheus"))

	// An undeclared series leaves the sink 2s after its last update, so
	// the check that declared ones stay needs no idle minute.
	promSinkExpiry = 2 * time.Second
	t.Cleanup(func() { promSinkExpiry = time.Minute })
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	// A batch job that max_run_duration ends: it would run a minute.
	job := mockJob("prom-mrd", 1)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "120s"}
	limit := 25 * time.Second
	job.TaskGroups[0].MaxRunDuration = &limit
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	waitAllocStatus(t, c, "prom-mrd", "running", 15*time.Second)

	// promtool: no errors; lint warnings are listed in the log.
	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
	must.NoError(t, err)
	var exposition bytes.Buffer
	_, err = exposition.ReadFrom(resp.Body)
	resp.Body.Close()
	must.NoError(t, err)
	maxRunScraped := strings.Contains(exposition.String(), "nomad_client_allocs_max_run_duration_remaining_seconds{")
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = bytes.NewReader(exposition.Bytes())
	out, err := check.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		// promtool exits 3 when it found only lint problems.
		t.Logf("promtool lint warnings:\n%s", out)
	default:
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}

	// A Prometheus server scraping the agent every second.
	dir := t.TempDir()
	promAddr := freeLoopbackAddr(t)
	agentURL, err := url.Parse(a.HTTPAddr())
	must.NoError(t, err)
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: nomad
    metrics_path: /v1/metrics
    params:
      format: [prometheus]
    static_configs:
      - targets: [%q]
`, agentURL.Host)
	confPath := filepath.Join(dir, "prometheus.yml")
	must.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	var promLog bytes.Buffer
	prom := exec.Command(promBin, "--config.file="+confPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	prom.Stdout, prom.Stderr = &promLog, &promLog
	// Prometheus dies with the test binary even if the test cannot run
	// its cleanup (a timeout panic).
	prom.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must.NoError(t, prom.Start())
	t.Cleanup(func() {
		_ = prom.Process.Kill()
		_ = prom.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", promLog.String())
		}
	})
	promURL := "http://" + promAddr
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		r, err := http.Get(promURL + "/-/ready")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))

	// The broker gauges reach Prometheus.
	for _, q := range []string{"nomad_nomad_broker_total_ready", "nomad_nomad_broker_total_unacked",
		"nomad_nomad_broker_total_blocked", "nomad_nomad_blocked_evals_total_blocked"} {
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			return len(promQuery(t, promURL, q)) > 0
		}), wait.Timeout(15*time.Second), wait.Gap(250*time.Millisecond)), must.Sprintf("%s never scraped", q))
	}

	// The batch queue's families are declared: Prometheus has them from
	// the first scrape, with their help, though no job went through the
	// queue, and keeps them (see TestTelemetry_DeclaredSeriesOutliveExpiry
	// for the sink's one-minute expiry, which needs no waiting there).
	for _, q := range []string{"nomad_nomad_batch_queue_enqueued_total", "nomad_nomad_batch_queue_released_total",
		"nomad_nomad_batch_queue_placed_total", "nomad_nomad_batch_queue_wait_time_seconds_count",
		"nomad_nomad_batch_queue_placement_time_seconds_count"} {
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			return len(promQuery(t, promURL, "rate("+q+"[5s])")) > 0
		}), wait.Timeout(15*time.Second), wait.Gap(250*time.Millisecond)), must.Sprintf("rate(%s) has no series", q))
	}
	// Idle for longer than the sink's expiry, they are still scraped.
	time.Sleep(3 * promSinkExpiry)
	for _, q := range []string{"nomad_nomad_batch_queue_enqueued_total", "nomad_nomad_batch_queue_wait_time_seconds_count"} {
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			// An instant query: a series that left the scrape is stale.
			return len(promQuery(t, promURL, q)) > 0
		}), wait.Timeout(5*time.Second), wait.Gap(250*time.Millisecond)), must.Sprintf("%s gone after an idle period", q))
	}
	meta := promMetadata(t, promURL, "nomad_nomad_batch_queue_released_total")
	must.StrContains(t, meta, "released to the scheduler", must.Sprint("help text of released_total in Prometheus"))

	if !maxRunScraped {
		t.Log("SKIPPED ASSERTION: nomad_client_allocs_max_run_duration_remaining_seconds is not served yet (the max_run_duration collector is not registered)")
		return
	}
	// The remaining time was scraped several times and went down. (Our
	// job label reads exported_job in Prometheus, beside the scrape job's
	// own job label; the test runs one job, so it selects by name.)
	const remaining = "nomad_client_allocs_max_run_duration_remaining_seconds"
	var values []float64
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		values = nil
		for _, r := range promQuery(t, promURL, remaining+"[1m]") {
			for _, v := range r.Values {
				f, _ := strconv.ParseFloat(v[1].(string), 64)
				values = append(values, f)
			}
		}
		return len(values) >= 3
	}), wait.Timeout(20*time.Second), wait.Gap(250*time.Millisecond)), must.Sprint(remaining+" was not scraped three times"))
	must.Greater(t, values[len(values)-1], values[0], must.Sprintf("%s did not decrease: %v", remaining, values))

	// Once max_run_duration ends the alloc, its series goes stale at the
	// next scrape instead of lingering.
	waitAllocStatus(t, c, "prom-mrd", "complete", 30*time.Second)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(promQuery(t, promURL, remaining)) == 0
	}), wait.Timeout(10*time.Second), wait.Gap(250*time.Millisecond)), must.Sprint("ended alloc still has a remaining-time series"))

	// ... and the timeout is counted, for the batch timeouts alert.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		r := promQuery(t, promURL, "nomad_client_allocs_max_run_duration_timeouts_total")
		return len(r) == 1 && len(r[0].Value) == 2 && r[0].Value[1] == "1"
	}), wait.Timeout(10*time.Second), wait.Gap(250*time.Millisecond)), must.Sprint("the timeout was not counted"))
}

// promResult is one series of a Prometheus query result.
type promResult struct {
	Metric map[string]string
	Value  []any
	Values [][]any
}

// promQuery runs an instant query through Prometheus's HTTP API; a
// failed query reads as no result, and is logged.
func promQuery(t *testing.T, base, q string) []promResult {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Logf("query %s: %v", q, err)
		return nil
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Error  string
		Data   struct{ Result []promResult }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Logf("query %s: %v %s", q, err, body.Error)
		return nil
	}
	return body.Data.Result
}

// promMetadata returns the help text Prometheus holds for a family,
// from its targets' metadata; "" when it has none.
func promMetadata(t *testing.T, base, family string) string {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/targets/metadata?metric=" + url.QueryEscape(family))
	if err != nil {
		t.Logf("metadata %s: %v", family, err)
		return ""
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   []struct{ Help string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" || len(body.Data) == 0 {
		t.Logf("metadata %s: %v %s", family, err, body.Status)
		return ""
	}
	return body.Data[0].Help
}

// freeLoopbackAddr returns a 127.0.0.1 address with a port free now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	return addr
}

// waitAllocStatus waits until some alloc of the job has the client status.
func waitAllocStatus(t *testing.T, c *api.Client, jobID, status string, timeout time.Duration) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false
		}
		for _, al := range allocs {
			if al.ClientStatus == status {
				return true
			}
		}
		return false
	}), wait.Timeout(timeout), wait.Gap(100*time.Millisecond)), must.Sprintf("job %s: no %s alloc", jobID, status))
}
