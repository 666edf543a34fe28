package agent

import (
	metrics "github.com/hashicorp/go-metrics"
	promsink "github.com/hashicorp/go-metrics/prometheus"

	"github.com/nomadq/nomadq/nomad/batchqueue"
	"github.com/nomadq/nomadq/structs"
)

// serverTimings are the summaries the server times through go-metrics,
// in milliseconds, by their go-metrics key without the service name.
// Their names are Nomad's. Declaring them gives each family its help
// text; labelled ones are declared with one label value, and the sink
// takes the help of the family for the others.
var serverTimings = []promsink.SummaryDefinition{
	{Name: []string{"nomad", "plan", "apply"}, Help: "Milliseconds the plan applier took for one plan, from its dequeue to handing its Raft entry on."},
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
}

// declareMetrics adds to the Prometheus sink's options every series the
// agent's components emit through go-metrics. A declared family is
// served from the agent's start, at 0, with its help text, and the sink
// never expires it: counters a quiet queue does not touch for a minute
// keep their value, so rate() and alerts over them keep working.
// max_run_duration's series are not here: they come from collectors that
// read live allocs (see registerCollectors), with their own help.
func declareMetrics(opts *promsink.PrometheusOpts) {
	withService := func(key []string) []string { return append([]string{serviceName}, key...) }
	for _, d := range serverTimings {
		d.Name = withService(d.Name)
		opts.SummaryDefinitions = append(opts.SummaryDefinitions, d)
	}
	for _, d := range serverCounters {
		d.Name = withService(d.Name)
		opts.CounterDefinitions = append(opts.CounterDefinitions, d)
	}
	for _, m := range batchqueue.Metrics() {
		name := withService(m.Key)
		switch m.Kind {
		case batchqueue.MetricCounter:
			opts.CounterDefinitions = append(opts.CounterDefinitions, promsink.CounterDefinition{Name: name, Help: m.Help, ConstLabels: m.Labels})
		case batchqueue.MetricSummary:
			opts.SummaryDefinitions = append(opts.SummaryDefinitions, promsink.SummaryDefinition{Name: name, Help: m.Help, ConstLabels: m.Labels})
		}
	}
}
