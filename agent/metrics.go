package agent

import (
	"fmt"
	"sort"
	"strings"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/nomadq/nomadq/agent/config"
)

// serviceName prefixes every series, so they read nomad.* and nomad_*.
const serviceName = "nomad"

// telemetry is an agent's metrics: its own go-metrics handle, in-memory
// sink and Prometheus registry. Nothing here is process-global, so agents
// started side by side in one test never see each other's series.
type telemetry struct {
	conf *config.Telemetry

	// inmem keeps recent timings and counters for /v1/metrics.
	inmem *metrics.InmemSink
	// prom is go-metrics' Prometheus sink, registered on registry.
	prom *promsink.PrometheusSink
	// sink fans out to inmem and prom.
	sink metrics.FanoutSink
	// metrics is the handle the server and the HTTP API time things with.
	metrics *metrics.Metrics

	// registry serves ?format=prometheus; gatherer filters it by
	// prefix_filter.
	registry *prometheus.Registry
	gatherer prometheus.Gatherer

	// live are the gauges read from live state at scrape time.
	live []*liveCollector

	// httpDuration times HTTP requests per route.
	httpDuration *prometheus.HistogramVec

	filter prefixFilter
}

// promSinkExpiry is how long an undeclared go-metrics series stays in
// the Prometheus sink after its last update; a variable so that a test
// against a real Prometheus can wait it out.
var promSinkExpiry = time.Minute

// newTelemetry builds an agent's sinks and registry from its telemetry
// block.
func newTelemetry(conf *config.Telemetry) (*telemetry, error) {
	interval, retain := 10*time.Second, time.Minute
	if s := conf.InMemoryCollectionInterval; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("telemetry.in_memory_collection_interval %q is not a positive duration", s)
		}
		interval = d
	}
	if s := conf.InMemoryRetentionPeriod; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("telemetry.in_memory_retention_period %q is not a positive duration", s)
		}
		retain = d
	}
	t := &telemetry{
		conf:     conf,
		inmem:    metrics.NewInmemSink(interval, retain),
		registry: prometheus.NewRegistry(),
		filter:   newPrefixFilter(conf.PrefixFilter, conf.FilterDefault),
	}
	var err error
	opts := promsink.PrometheusOpts{
		// Timings and counters only reach this sink; a minute is how long
		// a series stays after its last update, unless it is declared.
		Expiration: promSinkExpiry,
		Registerer: t.registry,
	}
	windowed, err := declareMetrics(&opts, t.registry)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.prom, err = promsink.NewPrometheusSinkFrom(opts)
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus sink: %w", err)
	}
	t.sink = metrics.FanoutSink{t.inmem, promGauges{PrometheusSink: t.prom, windowed: windowed}}
	t.metrics, err = metrics.New(t.metricsConfig(false), t.sink)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	t.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "nomad_http_request_duration_seconds",
		Help:    "Time the HTTP API took to answer a request, by method and route.",
		Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30, 300},
	}, []string{"method", "route"})
	t.registry.MustRegister(t.httpDuration)
	t.registry.MustRegister(collectors.NewGoCollector())
	t.registry.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	t.gatherer = filteredGatherer{g: t.registry, filter: t.filter}
	return t, nil
}

// metricsConfig is the go-metrics configuration the telemetry block
// describes. Runtime metrics poll forever, so only the process-global
// handle of `nomad agent` turns them on.
func (t *telemetry) metricsConfig(runtime bool) *metrics.Config {
	mc := metrics.DefaultConfig(serviceName)
	mc.EnableHostname = !t.conf.DisableHostname
	mc.EnableRuntimeMetrics = runtime
	if t.conf.CollectionIntervalDur > 0 {
		mc.ProfileInterval = t.conf.CollectionIntervalDur
	}
	for _, p := range t.conf.PrefixFilter {
		switch {
		case strings.HasPrefix(p, "+"):
			mc.AllowedPrefixes = append(mc.AllowedPrefixes, p[1:])
		case strings.HasPrefix(p, "-"):
			mc.BlockedPrefixes = append(mc.BlockedPrefixes, p[1:])
		}
	}
	if t.conf.FilterDefault != nil {
		mc.FilterDefault = *t.conf.FilterDefault
	}
	return mc
}

// registerCollectors is the one place collectors join the agent's
// Prometheus registry. Per-alloc collectors belong under
// publish_allocation_metrics, node-level ones under publish_node_metrics.
func (a *Agent) registerCollectors(reg *prometheus.Registry) {
	t := a.telemetry
	if a.server != nil {
		t.addLive(reg, serverGauges(a.server, t.conf.PublishJobMetrics))
	}
	nc, _ := a.client.(*nodeClient)
	if nc == nil {
		return
	}
	if t.conf.PublishNodeMetrics {
		t.addLive(reg, clientGauges(nc.c))
	}
	if t.conf.PublishAllocationMetrics {
		// Register, not MustRegister: the max_run_duration work may
		// register the same collector here too.
		_ = reg.Register(nc.c.MaxRunDurationCollector())
	}
}

func (t *telemetry) addLive(reg *prometheus.Registry, c *liveCollector) {
	c.filter = t.filter
	t.live = append(t.live, c)
	reg.MustRegister(c)
}

// observeHTTP records one request's duration under its route.
func (t *telemetry) observeHTTP(method, route string, start time.Time) {
	d := time.Since(start)
	t.httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
	key := []string{serviceName, "http", "request"}
	if t.filter.allowed(strings.Join(key, ".")) {
		t.inmem.AddSampleWithLabels(key, float32(d.Seconds()*1000), []metrics.Label{{Name: "method", Value: method}, {Name: "route", Value: route}})
	}
}

// summary is /v1/metrics: the in-memory sink's latest interval, in
// Nomad's shape, with the live gauges read now.
func (t *telemetry) summary() metrics.MetricsSummary {
	var out metrics.MetricsSummary
	data := t.inmem.Data()
	if n := len(data); n > 0 {
		// The current interval is still filling; the one before is whole.
		iv := data[n-1]
		if n > 1 {
			iv = data[n-2]
		}
		out = intervalSummary(iv)
	} else {
		out.Timestamp = time.Now().UTC().Truncate(time.Second).String()
	}
	if out.Gauges == nil {
		out.Gauges = []metrics.GaugeValue{}
	}
	for _, c := range t.live {
		c.read(func(g *liveGauge, v float64, lv ...string) {
			if !t.filter.allowed(g.dotted()) {
				return
			}
			gv := metrics.GaugeValue{Name: g.dotted(), Value: float32(v), DisplayLabels: map[string]string{}}
			for i, l := range g.labels {
				gv.Labels = append(gv.Labels, metrics.Label{Name: l, Value: lv[i]})
				gv.DisplayLabels[l] = lv[i]
			}
			out.Gauges = append(out.Gauges, gv)
		})
	}
	sort.Slice(out.Gauges, func(i, j int) bool {
		if out.Gauges[i].Name != out.Gauges[j].Name {
			return out.Gauges[i].Name < out.Gauges[j].Name
		}
		return fmt.Sprint(out.Gauges[i].Labels) < fmt.Sprint(out.Gauges[j].Labels)
	})
	return out
}

// intervalSummary turns one in-memory interval into Nomad's /v1/metrics shape.
func intervalSummary(iv *metrics.IntervalMetrics) metrics.MetricsSummary {
	iv.RLock()
	defer iv.RUnlock()
	out := metrics.MetricsSummary{
		Timestamp:       iv.Interval.Round(time.Second).UTC().String(),
		Gauges:          []metrics.GaugeValue{},
		PrecisionGauges: []metrics.PrecisionGaugeValue{},
		Points:          []metrics.PointValue{},
		Counters:        []metrics.SampledValue{},
		Samples:         []metrics.SampledValue{},
	}
	// The sink keeps labels apart from the name; Nomad's shape shows
	// them under Labels, as it does for counters and samples.
	display := func(ls []metrics.Label) map[string]string {
		m := make(map[string]string, len(ls))
		for _, l := range ls {
			m[l.Name] = l.Value
		}
		return m
	}
	for _, g := range iv.Gauges {
		g.DisplayLabels = display(g.Labels)
		out.Gauges = append(out.Gauges, g)
	}
	for _, g := range iv.PrecisionGauges {
		g.DisplayLabels = display(g.Labels)
		out.PrecisionGauges = append(out.PrecisionGauges, g)
	}
	for name, pts := range iv.Points {
		out.Points = append(out.Points, metrics.PointValue{Name: name, Points: append([]float32(nil), pts...)})
	}
	sampled := func(m map[string]metrics.SampledValue) []metrics.SampledValue {
		s := make([]metrics.SampledValue, 0, len(m))
		for _, v := range m {
			c := v
			if v.AggregateSample != nil {
				agg := *v.AggregateSample
				c.AggregateSample = &agg
				c.Mean = agg.Mean()
				c.Stddev = agg.Stddev()
			}
			c.DisplayLabels = display(v.Labels)
			s = append(s, c)
		}
		sort.Slice(s, func(i, j int) bool { return s[i].Hash < s[j].Hash })
		return s
	}
	out.Counters = sampled(iv.Counters)
	out.Samples = sampled(iv.Samples)
	sort.Slice(out.Points, func(i, j int) bool { return out.Points[i].Name < out.Points[j].Name })
	return out
}

// prefixFilter is telemetry.prefix_filter: "+prefix" allows, "-prefix"
// blocks, the longest matching prefix wins, and names no rule matches
// follow filter_default (true when unset), as go-metrics decides.
type prefixFilter struct {
	rules     map[string]bool
	byDefault bool
}

func newPrefixFilter(rules []string, filterDefault *bool) prefixFilter {
	f := prefixFilter{rules: map[string]bool{}, byDefault: true}
	if filterDefault != nil {
		f.byDefault = *filterDefault
	}
	for _, r := range rules {
		switch {
		case strings.HasPrefix(r, "+"):
			f.rules[r[1:]] = true
		case strings.HasPrefix(r, "-"):
			f.rules[r[1:]] = false
		}
	}
	return f
}

// allowed decides for a dotted go-metrics name, e.g. nomad.client.allocs.
func (f prefixFilter) allowed(name string) bool {
	best, ok := -1, f.byDefault
	for p, allow := range f.rules {
		if strings.HasPrefix(name, p) && len(p) > best {
			best, ok = len(p), allow
		}
	}
	return ok
}

// allowedProm decides for a Prometheus family name: its rules' dots read
// as underscores. Families of the Go runtime and process collectors are
// not Nomad's and always pass.
func (f prefixFilter) allowedProm(name string) bool {
	if !strings.HasPrefix(name, serviceName+"_") {
		return true
	}
	best, ok := -1, f.byDefault
	for p, allow := range f.rules {
		if strings.HasPrefix(name, promName(p)) && len(p) > best {
			best, ok = len(p), allow
		}
	}
	return ok
}

// filteredGatherer drops the families prefix_filter blocks.
type filteredGatherer struct {
	g      prometheus.Gatherer
	filter prefixFilter
}

func (f filteredGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := f.g.Gather()
	out := mfs[:0]
	for _, mf := range mfs {
		if f.filter.allowedProm(mf.GetName()) {
			out = append(out, mf)
		}
	}
	return out, err
}

// promName is a dotted name as Prometheus spells it.
func promName(dotted string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == ':' {
			return r
		}
		return '_'
	}, dotted)
}

// promGauges keeps go-metrics gauges of single allocs (client.allocs.*)
// out of the Prometheus sink: it could only expire them a minute after
// their alloc ended. In Prometheus they come from collectors that read
// the live allocs; /v1/metrics still shows them.
//
// It also sends the samples of windowed summaries (see summaryWindow)
// to them instead of the sink.
type promGauges struct {
	*promsink.PrometheusSink
	windowed map[string]*windowedSummary
}

func (p promGauges) AddSample(key []string, val float32) {
	p.AddSampleWithLabels(key, val, nil)
}

func (p promGauges) AddSampleWithLabels(key []string, val float32, labels []metrics.Label) {
	if w := p.windowed[promName(strings.Join(key, "_"))]; w != nil {
		w.observe(val, labels)
		return
	}
	p.PrometheusSink.AddSampleWithLabels(key, val, labels)
}

func perAllocGauge(key []string) bool {
	name := strings.Join(key, ".")
	return strings.Contains(name, ".client.allocs.") || strings.HasPrefix(name, "client.allocs.")
}

func (p promGauges) SetGauge(key []string, val float32) {
	if !perAllocGauge(key) {
		p.PrometheusSink.SetGauge(key, val)
	}
}

func (p promGauges) SetGaugeWithLabels(key []string, val float32, labels []metrics.Label) {
	if !perAllocGauge(key) {
		p.PrometheusSink.SetGaugeWithLabels(key, val, labels)
	}
}

func (p promGauges) SetPrecisionGauge(key []string, val float64) {
	if !perAllocGauge(key) {
		p.PrometheusSink.SetPrecisionGauge(key, val)
	}
}

func (p promGauges) SetPrecisionGaugeWithLabels(key []string, val float64, labels []metrics.Label) {
	if !perAllocGauge(key) {
		p.PrometheusSink.SetPrecisionGaugeWithLabels(key, val, labels)
	}
}
