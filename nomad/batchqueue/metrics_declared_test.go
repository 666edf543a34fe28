package batchqueue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// Every series the queue emits is declared in Metrics, with a help text
// of its own, so the agent can serve it from the start and never expire
// it. The scenario touches every counter and summary.
func TestQueue_MetricsAllDeclared(t *testing.T) {
	declared := map[string]Metric{}
	for _, m := range Metrics() {
		name := strings.Join(m.Key, ".")
		must.MapNotContainsKey(t, declared, name, must.Sprint("declared twice"))
		must.StrContains(t, m.Help, " ", must.Sprintf("%s has no help text", name))
		declared[name] = m
	}
	synctest.Test(t, func(t *testing.T) {
		sink := metrics.NewInmemSink(time.Hour, time.Hour)
		conf := metrics.DefaultConfig("")
		conf.EnableHostname, conf.EnableRuntimeMetrics = false, false
		m, err := metrics.New(conf, sink)
		must.NoError(t, err)
		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Minute), m)
		defer h.stop()
		h.registerAll("a", "b", "c")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		h.place("a", 0, 1)
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())
		h.infeasible("b")
		must.Eq(t, []string{"a", "b", "c"}, h.releasedJobs())
		time.Sleep(2 * time.Minute) // c stalls
		synctest.Wait()
		h.registerAll("d", "e")
		synctest.Wait()
		h.stopJob("e")
		synctest.Wait()

		emitted := map[string]bool{}
		for _, iv := range sink.Data() {
			for _, c := range iv.Counters {
				emitted[c.Name] = true
				must.Eq(t, MetricCounter, declared[c.Name].Kind, must.Sprintf("counter %s is not declared", c.Name))
			}
			for _, s := range iv.Samples {
				emitted[s.Name] = true
				must.Eq(t, MetricSummary, declared[s.Name].Kind, must.Sprintf("summary %s is not declared", s.Name))
			}
		}
		for _, name := range []string{"nomad.batch_queue.enqueued_total", "nomad.batch_queue.stalled_total", "nomad.batch_queue.placed_total",
			"nomad.batch_queue.constrained_total",
			"nomad.batch_queue.wait_time_seconds", "nomad.batch_queue.placement_time_seconds"} {
			must.True(t, emitted[name], must.Sprintf("the scenario did not emit %s: %v", name, emitted))
		}
	})
}

// Only metrics.go talks to go-metrics, through a declared Metric: a new
// series cannot be emitted without a declaration and its help.
func TestQueue_MetricsEmittedOnlyThroughDeclarations(t *testing.T) {
	files, err := filepath.Glob("*.go")
	must.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "metrics.go" {
			continue
		}
		src, err := os.ReadFile(f)
		must.NoError(t, err)
		for _, call := range []string{"cfg.Metrics.", "metrics.IncrCounter", "metrics.AddSample", "metrics.SetGauge", "metrics.MeasureSince"} {
			must.StrNotContains(t, string(src), call, must.Sprintf("%s emits a series outside metrics.go", f))
		}
	}
}

// A workload that waits 20 seconds behind the line is recorded as a 20
// second wait, through go-metrics' Prometheus sink as the agent builds
// it, and the one released at once as a wait of 0: the quantiles are
// seconds, like the name says.
func TestQueue_WaitTimeInSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		opts := promsink.PrometheusOpts{Expiration: time.Minute, Registerer: reg}
		for _, m := range Metrics() {
			if m.Kind == MetricSummary {
				opts.SummaryDefinitions = append(opts.SummaryDefinitions, promsink.SummaryDefinition{Name: m.Key, Help: m.Help, ConstLabels: m.Labels})
			}
		}
		sink, err := promsink.NewPrometheusSinkFrom(opts)
		must.NoError(t, err)
		conf := metrics.DefaultConfig("")
		conf.EnableHostname, conf.EnableRuntimeMetrics = false, false
		m, err := metrics.New(conf, sink)
		must.NoError(t, err)

		h := newHarness(t, cfg(structs.BatchQueueOrderFIFO, 1, time.Hour), m)
		defer h.stop()
		h.registerAll("a", "b")
		must.Eq(t, []string{"a"}, h.releasedJobs())
		time.Sleep(20 * time.Second)
		h.place("a", 0, 1) // frees the slot: b is released
		must.Eq(t, []string{"a", "b"}, h.releasedJobs())

		mfs, err := reg.Gather()
		must.NoError(t, err)
		var found bool
		for _, mf := range mfs {
			if mf.GetName() != "nomad_batch_queue_wait_time_seconds" {
				continue
			}
			for _, s := range mf.GetMetric() {
				sum := s.GetSummary()
				if sum.GetSampleCount() == 0 {
					continue
				}
				found = true
				must.Eq(t, 2, sum.GetSampleCount())
				must.Between(t, 19.9, sum.GetSampleSum(), 20.1)
				for _, q := range sum.GetQuantile() {
					if q.GetQuantile() == 0.99 {
						must.Between(t, 19.9, q.GetValue(), 20.1)
					}
				}
			}
		}
		must.True(t, found, must.Sprint("no wait_time_seconds sample"))
	})
}
