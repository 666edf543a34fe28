package client

import (
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadq/nomadq/client/allocrunner"
	"github.com/nomadq/nomadq/structs"
	"github.com/prometheus/client_golang/prometheus"
)

// maxRunSample is one armed alloc's pair of gauges.
type maxRunSample struct {
	labels     []string // values of maxRunVarLabels
	configured float64
	remaining  float64
}

// maxRunVarLabels tell apart the allocs of one node; the node labels
// are constant per client.
var maxRunVarLabels = []string{"task_group", "namespace", "job", "alloc_id"}

// maxRunSamples reads the live alloc runners now. An alloc whose runner
// has finished, or whose tasks are all dead, has no series.
func (c *Client) maxRunSamples(now time.Time) []maxRunSample {
	var out []maxRunSample
	for _, ar := range c.allRunners() {
		select {
		case <-ar.WaitCh():
			continue
		default:
		}
		if st, _ := ar.ClientStatus(); (&structs.Allocation{ClientStatus: st}).ClientTerminalStatus() {
			continue
		}
		a := ar.Alloc()
		plan := allocrunner.PlanMaxRun(a, now)
		if !plan.Armed {
			continue
		}
		out = append(out, maxRunSample{
			labels:     []string{a.TaskGroup, a.Namespace, a.JobID, a.ID},
			configured: plan.Configured.Seconds(),
			remaining:  plan.Remaining.Seconds(),
		})
	}
	return out
}

func (c *Client) nodeMetricLabels() prometheus.Labels {
	return prometheus.Labels{
		"node_id":    c.node.ID,
		"datacenter": c.node.Datacenter,
		"node_class": c.node.NodeClass,
		"node_pool":  c.node.NodePool,
	}
}

// maxRunCollector computes the max_run_duration gauges at scrape time.
type maxRunCollector struct {
	c          *Client
	configured *prometheus.Desc
	remaining  *prometheus.Desc
}

// MaxRunDurationCollector returns a Prometheus collector of the
// client.allocs.max_run_duration gauges, computed from the live alloc
// runners at each scrape, so remaining_seconds is exact and an alloc's
// series is gone from the first scrape after it ends. Its descriptors
// carry the node's labels as constants, so the collectors of several
// clients can share one registry.
func (c *Client) MaxRunDurationCollector() prometheus.Collector {
	node := c.nodeMetricLabels()
	return &maxRunCollector{
		c: c,
		configured: prometheus.NewDesc("nomad_client_allocs_max_run_duration_configured_seconds",
			"The allocation's max_run_duration, in seconds.", maxRunVarLabels, node),
		remaining: prometheus.NewDesc("nomad_client_allocs_max_run_duration_remaining_seconds",
			"Seconds until the allocation's max_run_duration deadline.", maxRunVarLabels, node),
	}
}

func (m *maxRunCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.configured
	ch <- m.remaining
}

func (m *maxRunCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range m.c.maxRunSamples(time.Now()) {
		ch <- prometheus.MustNewConstMetric(m.configured, prometheus.GaugeValue, s.configured, s.labels...)
		ch <- prometheus.MustNewConstMetric(m.remaining, prometheus.GaugeValue, s.remaining, s.labels...)
	}
}

// emitMaxRunMetrics writes the gauges to go-metrics (Config.Metrics,
// else the global handle) every Config.MetricsInterval, for the JSON
// form of /v1/metrics.
func (c *Client) emitMaxRunMetrics() {
	interval := c.cfg.MetricsInterval
	if interval <= 0 {
		interval = time.Second
	}
	set := metrics.SetGaugeWithLabels
	if m := c.cfg.Metrics; m != nil {
		set = m.SetGaugeWithLabels
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	node := c.nodeMetricLabels()
	base := []metrics.Label{
		{Name: "node_id", Value: node["node_id"]},
		{Name: "datacenter", Value: node["datacenter"]},
		{Name: "node_class", Value: node["node_class"]},
		{Name: "node_pool", Value: node["node_pool"]},
	}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		for _, s := range c.maxRunSamples(time.Now()) {
			labels := append([]metrics.Label(nil), base...)
			for i, name := range maxRunVarLabels {
				labels = append(labels, metrics.Label{Name: name, Value: s.labels[i]})
			}
			set([]string{"client", "allocs", "max_run_duration", "configured_seconds"}, float32(s.configured), labels)
			set([]string{"client", "allocs", "max_run_duration", "remaining_seconds"}, float32(s.remaining), labels)
		}
	}
}
