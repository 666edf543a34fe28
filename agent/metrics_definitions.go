package agent

import (
	"fmt"
	"strings"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/nomadq/nomadq/nomad/batchqueue"
	"github.com/nomadq/nomadq/structs"
)

// serverTimings are the summaries the server times through go-metrics,
// in milliseconds, by their go-metrics key without the service name.
// Their names are Nomad's. Declaring them gives each family its help
// text; labelled ones are declared with one label value, and the sink
// takes the help of the family for the others.
var serverTimings = []promsink.SummaryDefinition{
	{Name: []string{"nomad", "plan", "apply"}, Help: "Milliseconds the plan applier took for one plan: token check, evaluation, and handing its Raft entry to Raft (or the entry's commit, for a partial plan)."},
	{Name: []string{"nomad", "plan", "evaluate"}, Help: "Milliseconds spent checking a plan against the latest state."},
	{Name: []string{"nomad", "worker", "dequeue_eval"}, Help: "Milliseconds a scheduler worker waited for an evaluation it then got."},
	{Name: []string{"nomad", "worker", "invoke_scheduler", structs.JobTypeService}, Help: "Milliseconds the service scheduler took for one evaluation."},
	{Name: []string{"nomad", "worker", "invoke_scheduler", structs.JobTypeBatch}, Help: "Milliseconds the batch scheduler took for one evaluation."},
	{Name: []string{"nomad", "worker", "invoke_scheduler", structs.JobTypeSystem}, Help: "Milliseconds the system scheduler took for one evaluation."},
	{Name: []string{"nomad", "worker", "invoke_scheduler", structs.JobTypeSysBatch}, Help: "Milliseconds the sysbatch scheduler took for one evaluation."},
	{Name: []string{"nomad", "worker", "invoke_scheduler", structs.JobTypeCore}, Help: "Milliseconds a garbage collection (_core) evaluation took."},
	{Name: []string{"nomad", "raft", "apply"}, Help: "Milliseconds from submitting a write to Raft until it was committed and applied on the leader, by Raft message type.",
		ConstLabels: []metrics.Label{{Name: "type", Value: structs.JobRegisterRequestType.String()}}},
}

// serverCounters are the counters the server emits through go-metrics.
var serverCounters = []promsink.CounterDefinition{
	{Name: []string{"nomad", "client", "introduction_violation_num"}, Help: "Registrations of new nodes without a valid client introduction token, under client_introduction enforcement warn or strict."},
	{Name: []string{"client", "allocs", "max_run_duration", "warnings_total"}, Help: "max_run_duration_warning signals sent, one per allocation and deadline, by namespace, job and task group."},
}

// summaryWindow is how far back the batch queue's quantiles look. The
// go-metrics sink's summaries look 10 seconds back, less than a usual
// scrape interval: a 20 second wait released between two scrapes 15
// seconds apart was in no quantile, and the median read the quick
// releases around it. A minute covers the scrape intervals in use.
const summaryWindow = time.Minute

// windowedSummary is a declared summary the agent keeps itself rather
// than in the go-metrics sink, for its longer window.
type windowedSummary struct {
	vec    *prometheus.SummaryVec
	labels []string // label names, in the vector's order
}

func (w *windowedSummary) observe(val float32, labels []metrics.Label) {
	values := make([]string, len(w.labels))
	for i, name := range w.labels {
		for _, l := range labels {
			if l.Name == name {
				values[i] = l.Value
			}
		}
	}
	w.vec.WithLabelValues(values...).Observe(float64(val))
}

// declareMetrics declares every series the agent's components emit
// through go-metrics: the server's to the Prometheus sink's options, the
// batch queue's summaries as windowed summaries registered on reg, keyed
// by their Prometheus name. A declared family is served from the agent's
// start, at 0, with its help text, and is never expired: counters a quiet
// queue does not touch for a minute keep their value, so rate() and
// alerts over them keep working. max_run_duration's series are not here:
// they come from collectors that read live allocs (see
// registerCollectors).
func declareMetrics(opts *promsink.PrometheusOpts, reg prometheus.Registerer) (map[string]*windowedSummary, error) {
	withService := func(key []string) []string { return append([]string{serviceName}, key...) }
	for _, d := range serverTimings {
		d.Name = withService(d.Name)
		opts.SummaryDefinitions = append(opts.SummaryDefinitions, d)
	}
	for _, d := range serverCounters {
		d.Name = withService(d.Name)
		opts.CounterDefinitions = append(opts.CounterDefinitions, d)
	}
	windowed := map[string]*windowedSummary{}
	for _, m := range batchqueue.Metrics() {
		name := withService(m.Key)
		switch m.Kind {
		case batchqueue.MetricCounter:
			opts.CounterDefinitions = append(opts.CounterDefinitions, promsink.CounterDefinition{Name: name, Help: m.Help, ConstLabels: m.Labels})
		case batchqueue.MetricGauge:
			opts.GaugeDefinitions = append(opts.GaugeDefinitions, promsink.GaugeDefinition{Name: name, Help: m.Help, ConstLabels: m.Labels})
		case batchqueue.MetricSummary:
			w := &windowedSummary{}
			values := make([]string, len(m.Labels))
			for i, l := range m.Labels {
				w.labels = append(w.labels, l.Name)
				values[i] = l.Value
			}
			w.vec = prometheus.NewSummaryVec(prometheus.SummaryOpts{
				Name:       promName(strings.Join(name, "_")),
				Help:       m.Help,
				MaxAge:     summaryWindow,
				Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},
			}, w.labels)
			if err := reg.Register(w.vec); err != nil {
				return nil, fmt.Errorf("declare %s: %w", strings.Join(name, "."), err)
			}
			w.vec.WithLabelValues(values...) // served from the start
			windowed[promName(strings.Join(name, "_"))] = w
		}
	}
	return windowed, nil
}
