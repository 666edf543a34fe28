package agent

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// A counter the batch queue has not touched for longer than the sink's
// one-minute expiry keeps its family, value and help, so rate() and
// alerts over it keep working; so do the wait times of every namespace.
func TestTelemetry_DeclaredSeriesOutliveExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel, err := newTelemetry(&config.Telemetry{})
		must.NoError(t, err)
		tel.metrics.IncrCounter([]string{"nomad", "batch_queue", "released_total"}, 1)
		tel.metrics.AddSampleWithLabels([]string{"nomad", "batch_queue", "wait_time_seconds"}, 20,
			[]metrics.Label{{Name: "namespace", Value: "other"}})
		time.Sleep(2 * time.Minute)

		mfs, err := tel.registry.Gather()
		must.NoError(t, err)
		help := map[string]string{}
		var released float64
		var waitSeries []string
		for _, mf := range mfs {
			help[mf.GetName()] = mf.GetHelp()
			for _, m := range mf.GetMetric() {
				switch mf.GetName() {
				case "nomad_nomad_batch_queue_released_total":
					released = m.GetCounter().GetValue()
				case "nomad_nomad_batch_queue_wait_time_seconds":
					for _, l := range m.GetLabel() {
						waitSeries = append(waitSeries, l.GetValue())
					}
				}
			}
		}
		must.Eq(t, 1, released)
		must.SliceContainsAll(t, []string{"default", "other"}, waitSeries)
		for _, name := range []string{"enqueued_total", "released_total", "placed_total", "backfilled_total",
			"removed_total", "stalled_total", "constrained_total", "wait_time_seconds", "placement_time_seconds"} {
			family := "nomad_nomad_batch_queue_" + name
			must.MapContainsKey(t, help, family)
			must.NotEq(t, family, help[family], must.Sprintf("%s has no help text", family))
		}
	})
}

// A 20 second wait released between two scrapes 15 seconds apart is in
// the quantiles of the next scrape, beside the quick release just before
// it: the window covers a scrape interval, where go-metrics' summaries
// forgot a sample after 10 seconds and the median read 0.4 ms.
func TestTelemetry_WaitTimeQuantilesCoverAScrapeInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tel, err := newTelemetry(&config.Telemetry{})
		must.NoError(t, err)
		key := []string{"nomad", "batch_queue", "wait_time_seconds"}
		ns := []metrics.Label{{Name: "namespace", Value: "default"}}
		tel.metrics.AddSampleWithLabels(key, 20, ns)
		time.Sleep(12 * time.Second)
		tel.metrics.AddSampleWithLabels(key, 0.0004, ns)
		time.Sleep(3 * time.Second) // the scrape, 15s after the last

		mfs, err := tel.registry.Gather()
		must.NoError(t, err)
		var found bool
		for _, mf := range mfs {
			if mf.GetName() != "nomad_nomad_batch_queue_wait_time_seconds" {
				continue
			}
			must.Eq(t, "summary", strings.ToLower(mf.GetType().String()))
			for _, m := range mf.GetMetric() {
				found = true
				s := m.GetSummary()
				must.Eq(t, 2, s.GetSampleCount())
				must.Between(t, 20, s.GetSampleSum(), 20.001)
				q := map[float64]float64{}
				for _, v := range s.GetQuantile() {
					q[v.GetQuantile()] = v.GetValue()
				}
				must.Eq(t, 20, q[0.99], must.Sprintf("quantiles %v", q))
				must.Eq(t, 20, q[0.9], must.Sprintf("quantiles %v", q))
			}
		}
		must.True(t, found)

		// A minute later the window is empty, as the help text says.
		time.Sleep(summaryWindow)
		mfs, err = tel.registry.Gather()
		must.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == "nomad_nomad_batch_queue_wait_time_seconds" {
				for _, v := range mf.GetMetric()[0].GetSummary().GetQuantile() {
					must.True(t, math.IsNaN(v.GetValue()))
				}
				must.Eq(t, 2, mf.GetMetric()[0].GetSummary().GetSampleCount())
			}
		}
	})
}

// A fresh agent serves the batch queue's families before any job ran,
// and every nomadq family it serves has a help text other than its name
// (the go-metrics default).
func TestMetrics_EveryFamilyHasHelp(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Telemetry.DisableHostname = true })
	help := map[string]string{}
	resp, err := http.Get(a.HTTPAddr() + "/v1/metrics?format=prometheus")
	must.NoError(t, err)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.SplitN(sc.Text(), " ", 4); len(f) == 4 && f[0] == "#" && f[1] == "HELP" {
			help[f[2]] = f[3]
		}
	}
	resp.Body.Close()
	must.NoError(t, sc.Err())
	for _, family := range []string{"nomad_nomad_batch_queue_enqueued_total", "nomad_nomad_batch_queue_released_total",
		"nomad_nomad_batch_queue_wait_time_seconds", "nomad_nomad_batch_queue_placement_time_seconds",
		"nomad_nomad_plan_apply", "nomad_nomad_worker_invoke_scheduler_batch", "nomad_nomad_raft_apply"} {
		must.MapContainsKey(t, help, family, must.Sprint("not served by a fresh agent"))
	}
	for family, h := range help {
		if strings.HasPrefix(family, "nomad_") {
			must.NotEq(t, family, h, must.Sprintf("%s has no help text", family))
		}
	}
}

// /v1/metrics in JSON shows the per-allocation gauges with the labels the
// metrics page promises: alloc_id, job, task_group, namespace and the
// node's.
func TestMetrics_JSONGaugeLabels(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Telemetry.DisableHostname = true
		c.Telemetry.InMemoryCollectionInterval = "1s"
	})
	c := apiClient(t, a)
	job := mockJob("json-labels", 1)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "60s"}
	limit := 50 * time.Second
	job.TaskGroups[0].MaxRunDuration = &limit
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	waitAllocStatus(t, c, "json-labels", "running", 15*time.Second)

	var labels map[string]string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		resp, err := http.Get(a.HTTPAddr() + "/v1/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct {
			Gauges []struct {
				Name   string
				Labels map[string]string
			}
		}
		if json.NewDecoder(resp.Body).Decode(&body) != nil {
			return false
		}
		for _, g := range body.Gauges {
			if g.Name == "nomad.client.allocs.max_run_duration.remaining_seconds" {
				labels = g.Labels
				return true
			}
		}
		return false
	}), wait.Timeout(15*time.Second), wait.Gap(250*time.Millisecond)), must.Sprint("no remaining_seconds gauge in /v1/metrics"))
	must.Eq(t, "json-labels", labels["job"])
	must.Eq(t, "g", labels["task_group"])
	must.Eq(t, "default", labels["namespace"])
	must.Eq(t, 36, len(labels["alloc_id"]))
	must.MapContainsKeys(t, labels, []string{"node_id", "datacenter", "node_class", "node_pool"})
}
