package batchqueue

import (
	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadq/nomadq/structs"
)

// The queue's series are new, so they follow Prometheus naming: counters
// end in _total and durations are seconds, named so.

// MetricKind is the Prometheus type of a queue series emitted through
// go-metrics.
type MetricKind string

// The kinds of series the queue emits through go-metrics.
const (
	MetricCounter MetricKind = "counter"
	MetricSummary MetricKind = "summary"
	MetricGauge   MetricKind = "gauge"
)

// Metric is one series the queue emits through go-metrics. The agent
// declares every one of them to its Prometheus sink up front (see
// Metrics), so a family is served from the agent's start with its help
// text and is not dropped when the queue is idle for longer than the
// sink's expiry, which would break rate() and alerts.
type Metric struct {
	Kind MetricKind
	// Key is the go-metrics key, without the agent's service name.
	Key  []string
	Help string
	// Labels are declared with these values, so the series is served
	// from the start; other values of the same label names appear at
	// their first update.
	Labels []metrics.Label
}

func newMetric(kind MetricKind, name, help string, labels ...metrics.Label) *Metric {
	m := &Metric{Kind: kind, Key: []string{"nomad", "batch_queue", name}, Help: help, Labels: labels}
	allMetrics = append(allMetrics, m)
	return m
}

// allMetrics lists every Metric, in declaration order; newMetric is the
// only way to make one, so an emitted series cannot lack a declaration.
var allMetrics []*Metric

var (
	metricEnqueued    = newMetric(MetricCounter, "enqueued_total", "Entries added to the batch queue.")
	metricReleased    = newMetric(MetricCounter, "released_total", "Entries the batch queue released to the scheduler.")
	metricPlaced      = newMetric(MetricCounter, "placed_total", "Released entries whose allocations were placed, or that had nothing left to place.")
	metricBackfilled  = newMetric(MetricCounter, "backfilled_total", "Workloads the batch queue released ahead of a reservation (backfill).")
	metricRemoved     = newMetric(MetricCounter, "removed_total", "Entries that left the batch queue without being placed: stopped, purged, re-registered, or drained when the queue was switched off.")
	metricStalled     = newMetric(MetricCounter, "stalled_total", "Placing entries that went workload_timeout without a new placement.")
	metricConstrained = newMetric(MetricCounter, "constrained_total", "Released entries the scheduler found infeasible on every node.")
	metricWaitTime    = newMetric(MetricSummary, "wait_time_seconds",
		"Seconds an entry waited in the batch queue, from enqueue to release, by namespace. Time spent placing after the release is placement_time_seconds.",
		metrics.Label{Name: "namespace", Value: structs.DefaultNamespace})
	metricPlacementTime = newMetric(MetricSummary, "placement_time_seconds", "Seconds from an entry's release to the placement of its allocations.")

	// The multifactor order's gauges, set by each round that ranks the
	// line (a round with a free placement slot).
	metricPriorityP50 = newMetric(MetricGauge, "effective_priority_p50", "Median effective priority of the queued entries at the last multifactor round; 0 when none is queued.")
	metricPriorityP90 = newMetric(MetricGauge, "effective_priority_p90", "90th percentile of the queued entries' effective priorities at the last multifactor round; 0 when none is queued.")
	metricPriorityMax = newMetric(MetricGauge, "effective_priority_max", "Highest effective priority of the queued entries (the head of the line) at the last multifactor round; 0 when none is queued.")
	metricUsage       = newMetric(MetricGauge, "usage", "A namespace's decayed usage in share-seconds (dominant share of the cluster times seconds run, decayed with UsageHalfLife) at the last multifactor round, when FairShareWeight is set.",
		metrics.Label{Name: "namespace", Value: structs.DefaultNamespace})
	metricFairShare = newMetric(MetricGauge, "fair_share_factor", "A namespace's fair-share factor 2^(-U/S), 0 to 1, at the last multifactor round, when FairShareWeight is set.",
		metrics.Label{Name: "namespace", Value: structs.DefaultNamespace})
)

// verdictCounters count the entries that reach a verdict status.
var verdictCounters = map[string]*Metric{
	structs.BatchQueueStatusStalled:     metricStalled,
	structs.BatchQueueStatusConstrained: metricConstrained,
}

// Metrics returns every series the queue emits through go-metrics, for
// the agent to declare to its sinks.
func Metrics() []Metric {
	out := make([]Metric, len(allMetrics))
	for i, m := range allMetrics {
		out[i] = *m
		out[i].Key = append([]string(nil), m.Key...)
		out[i].Labels = append([]metrics.Label(nil), m.Labels...)
	}
	return out
}

func (q *Queue) incr(m *Metric) {
	if q.cfg.Metrics != nil && m != nil {
		q.cfg.Metrics.IncrCounter(m.Key, 1)
	}
}

// sample records a duration in seconds, as the series' names say.
func (q *Queue) sample(m *Metric, seconds float64) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.AddSample(m.Key, float32(seconds))
	}
}

// sampleNS is sample with a namespace label.
func (q *Queue) sampleNS(m *Metric, namespace string, seconds float64) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.AddSampleWithLabels(m.Key, float32(seconds), []metrics.Label{{Name: "namespace", Value: namespace}})
	}
}

// gauge sets a gauge, with labels when given.
func (q *Queue) gauge(m *Metric, val float64, labels ...metrics.Label) {
	if q.cfg.Metrics != nil {
		q.cfg.Metrics.SetGaugeWithLabels(m.Key, float32(val), labels)
	}
}

// lineGauges sets the multifactor gauges from what a round saw of the
// line; nothing when the round did not rank it.
func (q *Queue) lineGauges(s *LineStats) {
	if s == nil {
		return
	}
	q.gauge(metricPriorityP50, s.P50)
	q.gauge(metricPriorityP90, s.P90)
	q.gauge(metricPriorityMax, s.Max)
	for _, u := range s.Usage {
		ns := metrics.Label{Name: "namespace", Value: u.Namespace}
		q.gauge(metricUsage, u.Usage, ns)
		q.gauge(metricFairShare, u.FairShare, ns)
	}
}
