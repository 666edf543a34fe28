package batchqueue

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// A multifactor round's gauges carry each namespace's decayed usage and
// fair-share factor, labelled by namespace, and the line's effective
// priority quantiles; the other orders set none of them.
func TestQueue_MultifactorGauges(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	conf := metrics.DefaultConfig("")
	conf.EnableHostname, conf.EnableRuntimeMetrics = false, false
	m, err := metrics.New(conf, sink)
	must.NoError(t, err)
	q := &Queue{cfg: Config{Metrics: m}}

	hour := time.Hour
	total := structs.ComparableResources{CPU: 1000, MemoryMB: 1000}
	// qa ran the whole cluster for the last hour, qb never ran.
	spans := map[string][]Span{"qa": {{Share: 1, Start: mfNow.Add(-hour), End: mfNow}}}
	line := []*structs.BatchQueueEntry{
		mfe("qa", "a1", 10, 1, 0), mfe("qa", "a2", 20, 2, 0), mfe("qa", "a3", 30, 3, 0),
		mfe("qb", "b1", 40, 4, 0), mfe("qb", "b2", 50, 5, 0),
	}
	plan := func(order string) Decision {
		c := mfConfig(1, structs.BatchQueueMultifactor{PriorityWeight: 100, FairShareWeight: 1000, UsageHalfLife: hour})
		c.Order = order
		return Plan(Input{Config: c, Now: mfNow, Line: slices.Values(line), Cluster: Cluster{Total: total, Spans: spans}})
	}

	q.lineGauges(plan(structs.BatchQueueOrderPriority).Line)
	gauges := func() map[string]float32 {
		got := map[string]float32{}
		for _, iv := range sink.Data() {
			for _, g := range iv.Gauges {
				got[g.Name+labelsOf(g.Labels)] = g.Value
			}
		}
		return got
	}
	must.MapEmpty(t, gauges())

	d := plan(structs.BatchQueueOrderMultifactor)
	must.Eq(t, []string{"b2"}, releasedIDs(d))
	q.lineGauges(d.Line)
	got := gauges()

	// qa's usage: 3600 s decayed with a one-hour half-life is
	// 3600/ln 2 * (1 - 1/2) share-seconds; all of the usage, so its
	// factor is 2^(-1/0.5) = 0.25; qb's is 2^0 = 1.
	wantUsage := 3600 / math.Ln2 / 2
	must.Between(t, wantUsage-1, float64(got["nomad.batch_queue.usage;namespace=qa"]), wantUsage+1)
	must.Eq(t, 0, got["nomad.batch_queue.usage;namespace=qb"])
	must.Between(t, 0.249, float64(got["nomad.batch_queue.fair_share_factor;namespace=qa"]), 0.251)
	must.Eq(t, 1, got["nomad.batch_queue.fair_share_factor;namespace=qb"])

	// Effective priorities: qa's 250+10, 250+20, 250+30; qb's 1000+40,
	// 1000+50: the median is the third of five (nearest rank).
	must.Eq(t, 1050, got["nomad.batch_queue.effective_priority_max"])
	must.Eq(t, 280, got["nomad.batch_queue.effective_priority_p50"])
	must.Eq(t, 1050, got["nomad.batch_queue.effective_priority_p90"])

	// Every gauge is declared, with its help text.
	declared := map[string]bool{}
	for _, m := range Metrics() {
		if m.Kind == MetricGauge {
			declared[strings.Join(m.Key, ".")] = true
		}
	}
	for name := range got {
		must.True(t, declared[strings.SplitN(name, ";", 2)[0]], must.Sprintf("gauge %s is not declared", name))
	}
}

func labelsOf(ls []metrics.Label) string {
	var s string
	for _, l := range ls {
		s += ";" + l.Name + "=" + l.Value
	}
	return s
}

// Through go-metrics' Prometheus sink, declared as the agent declares
// them, the gauges are served before any round (at 0, the namespace
// ones for default) and carry each namespace's values after one.
func TestQueue_MultifactorGaugesInPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	opts := promsink.PrometheusOpts{Expiration: time.Minute, Registerer: reg}
	for _, m := range Metrics() {
		if m.Kind == MetricGauge {
			opts.GaugeDefinitions = append(opts.GaugeDefinitions, promsink.GaugeDefinition{Name: m.Key, Help: m.Help, ConstLabels: m.Labels})
		}
	}
	sink, err := promsink.NewPrometheusSinkFrom(opts)
	must.NoError(t, err)
	conf := metrics.DefaultConfig("")
	conf.EnableHostname, conf.EnableRuntimeMetrics = false, false
	m, err := metrics.New(conf, sink)
	must.NoError(t, err)
	q := &Queue{cfg: Config{Metrics: m}}

	read := func() map[string]float64 {
		mfs, err := reg.Gather()
		must.NoError(t, err)
		got := map[string]float64{}
		for _, mf := range mfs {
			for _, s := range mf.GetMetric() {
				name := mf.GetName()
				for _, l := range s.GetLabel() {
					name += ";" + l.GetName() + "=" + l.GetValue()
				}
				got[name] = s.GetGauge().GetValue()
			}
		}
		return got
	}
	before := read()
	for _, name := range []string{"nomad_batch_queue_effective_priority_p50", "nomad_batch_queue_effective_priority_p90",
		"nomad_batch_queue_effective_priority_max", "nomad_batch_queue_usage;namespace=default", "nomad_batch_queue_fair_share_factor;namespace=default"} {
		must.MapContainsKey(t, before, name)
	}

	spans := map[string][]Span{"qa": {{Share: 0.5, Start: mfNow.Add(-time.Hour), End: mfNow.Add(-time.Hour / 2)}}}
	c := mfConfig(1, structs.BatchQueueMultifactor{FairShareWeight: 1, UsageHalfLife: time.Hour})
	d := Plan(Input{Config: c, Now: mfNow, Line: slices.Values([]*structs.BatchQueueEntry{mfe("qa", "a", 50, 1, 0), mfe("qb", "b", 50, 2, 0)}),
		Cluster: Cluster{Total: structs.ComparableResources{CPU: 100, MemoryMB: 100}, Spans: spans}})
	must.Eq(t, []string{"b"}, releasedIDs(d))
	q.lineGauges(d.Line)
	got := read()
	must.Greater(t, 0, got["nomad_batch_queue_usage;namespace=qa"])
	must.Between(t, 0.249, got["nomad_batch_queue_fair_share_factor;namespace=qa"], 0.251)
	must.Eq(t, 1, got["nomad_batch_queue_fair_share_factor;namespace=qb"])
	must.Eq(t, 1, got["nomad_batch_queue_effective_priority_max"])
}
