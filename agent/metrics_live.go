package agent

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// liveGauge is one gauge read from live state at scrape time. Its key is
// the go-metrics name without the service prefix, so it reads
// nomad.<key> in /v1/metrics and nomad_<key> in Prometheus.
type liveGauge struct {
	key    []string
	help   string
	labels []string
	desc   *prometheus.Desc
	// counter marks a monotonic count (its key ends in _total).
	counter bool
}

func newLiveGauge(help string, labels []string, key ...string) *liveGauge {
	g := &liveGauge{key: key, help: help, labels: labels}
	g.desc = prometheus.NewDesc(promName(g.dotted()), help, labels, nil)
	return g
}

// dotted is the gauge's go-metrics name.
func (g *liveGauge) dotted() string { return serviceName + "." + strings.Join(g.key, ".") }

// liveCollector serves gauges of things that come and go (allocs, jobs,
// queue entries). It keeps nothing between scrapes: read walks the state
// as it is now, so a thing that ended is absent from the next scrape,
// and memory does not grow with the number of things ever seen.
type liveCollector struct {
	gauges []*liveGauge
	// read emits each gauge's current values.
	read   func(emit func(g *liveGauge, v float64, labelValues ...string))
	filter prefixFilter
}

// Describe implements prometheus.Collector.
func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range c.gauges {
		ch <- g.desc
	}
}

// Collect implements prometheus.Collector.
func (c *liveCollector) Collect(ch chan<- prometheus.Metric) {
	c.read(func(g *liveGauge, v float64, lv ...string) {
		if !c.filter.allowed(g.dotted()) {
			return
		}
		vt := prometheus.GaugeValue
		if g.counter {
			vt = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(g.desc, vt, v, lv...)
	})
}
