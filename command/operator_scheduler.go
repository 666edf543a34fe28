package command

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// schedulerConfig is the scheduler configuration as nomadq's API shows it:
// Nomad's fields plus BatchQueue, which the official client lacks, so
// these commands use its raw request helpers with this type.
type schedulerConfig struct {
	SchedulerAlgorithm            string
	PreemptionConfig              api.PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	// NodeLimitForFeasibilityChecks has no flag; it is carried so that
	// set-config keeps the stored value.
	NodeLimitForFeasibilityChecks uint
	BatchQueue                    batchQueueConfig
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

type batchQueueConfig struct {
	Enabled              bool
	Order                string
	ConcurrentPlacements int
	WorkloadTimeout      time.Duration
	Backfill             bool
	// Multifactor is carried so that set-config keeps the stored weights.
	Multifactor struct {
		PriorityWeight  float64
		AgeWeight       float64
		FairShareWeight float64
		SizeWeight      float64
		MaxAge          time.Duration
		UsageHalfLife   time.Duration
	}
}

type schedulerConfigResponse struct {
	SchedulerConfig *schedulerConfig
	api.QueryMeta
}

type schedulerSetConfigResponse struct {
	Updated bool
	api.WriteMeta
}

const schedulerGetConfigUsage = `
Usage: nomad operator scheduler get-config [options]

  Display the current scheduler configuration, including the batch queue.
`

func getSchedulerConfig(c *api.Client) (*schedulerConfigResponse, error) {
	var resp schedulerConfigResponse
	if _, err := c.Raw().Query("/v1/operator/scheduler/configuration", &resp, nil); err != nil {
		return nil, err
	}
	if resp.SchedulerConfig == nil {
		return nil, fmt.Errorf("the agent returned no scheduler configuration")
	}
	return &resp, nil
}

func runSchedulerGetConfig(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("operator scheduler get-config", s.Stderr, schedulerGetConfigUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the scheduler config in its JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the scheduler config using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	resp, err := getSchedulerConfig(client)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying scheduler configuration: %s\n", err)
		return 1
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, resp.SchedulerConfig); done {
		return code
	}
	c := resp.SchedulerConfig
	fmt.Fprintln(s.Stdout, formatKV([]string{
		"Scheduler Algorithm|" + c.SchedulerAlgorithm,
		fmt.Sprintf("Memory Oversubscription|%v", c.MemoryOversubscriptionEnabled),
		fmt.Sprintf("Reject Job Registration|%v", c.RejectJobRegistration),
		fmt.Sprintf("Pause Eval Broker|%v", c.PauseEvalBroker),
	}))
	fmt.Fprintln(s.Stdout, "\nPreemption Config")
	fmt.Fprintln(s.Stdout, formatKV([]string{
		fmt.Sprintf("System Scheduler|%v", c.PreemptionConfig.SystemSchedulerEnabled),
		fmt.Sprintf("SysBatch Scheduler|%v", c.PreemptionConfig.SysBatchSchedulerEnabled),
		fmt.Sprintf("Service Scheduler|%v", c.PreemptionConfig.ServiceSchedulerEnabled),
		fmt.Sprintf("Batch Scheduler|%v", c.PreemptionConfig.BatchSchedulerEnabled),
	}))
	fmt.Fprintln(s.Stdout, "\nBatch Queue")
	fmt.Fprintln(s.Stdout, formatKV([]string{
		fmt.Sprintf("Enabled|%v", c.BatchQueue.Enabled),
		"Order|" + c.BatchQueue.Order,
		fmt.Sprintf("Concurrent Placements|%d", c.BatchQueue.ConcurrentPlacements),
		"Workload Timeout|" + c.BatchQueue.WorkloadTimeout.String(),
		fmt.Sprintf("Backfill|%v", c.BatchQueue.Backfill),
	}))
	if m := c.BatchQueue.Multifactor; c.BatchQueue.Order == "multifactor" {
		fmt.Fprintln(s.Stdout, "\nBatch Queue Multifactor")
		fmt.Fprintln(s.Stdout, formatKV([]string{
			fmt.Sprintf("Priority Weight|%g", m.PriorityWeight),
			fmt.Sprintf("Age Weight|%g", m.AgeWeight),
			fmt.Sprintf("Fair Share Weight|%g", m.FairShareWeight),
			fmt.Sprintf("Size Weight|%g", m.SizeWeight),
			"Max Age|" + m.MaxAge.String(),
			"Usage Half-Life|" + m.UsageHalfLife.String(),
		}))
	}
	return 0
}

const schedulerSetConfigUsage = `
Usage: nomad operator scheduler set-config [options]

  Modify the scheduler configuration, including the batch queue. Only the
  settings given on the command line change.
`

// boolFlag is a flag that records whether it was set.
type boolFlag struct {
	set   bool
	value bool
}

func (b *boolFlag) String() string   { return strconv.FormatBool(b.value) }
func (b *boolFlag) IsBoolFlag() bool { return true }
func (b *boolFlag) Set(v string) error {
	x, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("must be true or false")
	}
	b.set, b.value = true, x
	return nil
}

func runSchedulerSetConfig(args []string, s Streams) int {
	var (
		af                                 apiFlags
		algorithm, bqOrder, bqTimeout      string
		memOversub, rejectJobs, pauseEval  boolFlag
		prSystem, prSysBatch, prBatch, prS boolFlag
		bqEnabled, bqBackfill              boolFlag
		bqConcurrent                       int
		checkIndex                         uint64
		c0                                 schedulerConfig // the multifactor flags' values
	)
	fs := newFlagSet("operator scheduler set-config", s.Stderr, schedulerSetConfigUsage)
	af.register(fs)
	fs.StringVar(&algorithm, "scheduler-algorithm", "", `The scheduler algorithm: "binpack" or "spread"`)
	fs.Var(&memOversub, "memory-oversubscription", "Whether memory oversubscription is enabled")
	fs.Var(&rejectJobs, "reject-job-registration", "Whether new job registrations are rejected")
	fs.Var(&pauseEval, "pause-eval-broker", "Whether the eval broker is paused")
	fs.Var(&prSystem, "preempt-system-scheduler", "Whether system jobs may preempt")
	fs.Var(&prSysBatch, "preempt-sysbatch-scheduler", "Whether sysbatch jobs may preempt")
	fs.Var(&prBatch, "preempt-batch-scheduler", "Whether batch jobs may preempt")
	fs.Var(&prS, "preempt-service-scheduler", "Whether service jobs may preempt")
	fs.Var(&bqEnabled, "batch-queue-enabled", "Whether the batch job queue is enabled")
	fs.StringVar(&bqOrder, "batch-queue-order", "", `The batch queue order: "fifo", "priority", "fair" or "multifactor"`)
	fs.Var(&bqBackfill, "batch-queue-backfill", "Whether jobs with a max_run_duration may run ahead of a job waiting for capacity (default: on for the priority and fair orders)")
	fs.IntVar(&bqConcurrent, "batch-queue-concurrent-placements", 0, "How many queued batch jobs may be placing at once (at least 1)")
	fs.StringVar(&bqTimeout, "batch-queue-workload-timeout", "", `How long the queue waits for a released job to be placed (for example "5m")`)
	mf := &c0.BatchQueue.Multifactor
	fs.Float64Var(&mf.PriorityWeight, "batch-queue-priority-weight", 0, "The multifactor order's weight of job priority (at least 0)")
	fs.Float64Var(&mf.AgeWeight, "batch-queue-age-weight", 0, "The multifactor order's weight of time in the queue (at least 0)")
	fs.Float64Var(&mf.FairShareWeight, "batch-queue-fair-share-weight", 0, "The multifactor order's weight of the namespace's fair share (at least 0)")
	fs.Float64Var(&mf.SizeWeight, "batch-queue-size-weight", 0, "The multifactor order's weight of small job size (at least 0)")
	fs.DurationVar(&mf.MaxAge, "batch-queue-max-age", 0, `The wait at which the multifactor age factor reaches 1 (for example "24h")`)
	fs.DurationVar(&mf.UsageHalfLife, "batch-queue-usage-half-life", 0, `The half-life of the multifactor order's decayed usage (for example "72h")`)
	fs.Uint64Var(&checkIndex, "check-index", 0, "Only update if the configuration's modify index matches")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	resp, err := getSchedulerConfig(client)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error querying scheduler configuration: %s\n", err)
		return 1
	}
	c := *resp.SchedulerConfig
	if algorithm != "" {
		c.SchedulerAlgorithm = algorithm
	}
	for _, b := range []struct {
		f    *boolFlag
		into *bool
	}{
		{&memOversub, &c.MemoryOversubscriptionEnabled}, {&rejectJobs, &c.RejectJobRegistration},
		{&pauseEval, &c.PauseEvalBroker}, {&prSystem, &c.PreemptionConfig.SystemSchedulerEnabled},
		{&prSysBatch, &c.PreemptionConfig.SysBatchSchedulerEnabled}, {&prBatch, &c.PreemptionConfig.BatchSchedulerEnabled},
		{&prS, &c.PreemptionConfig.ServiceSchedulerEnabled}, {&bqEnabled, &c.BatchQueue.Enabled},
	} {
		if b.f.set {
			*b.into = b.f.value
		}
	}
	if bqOrder != "" {
		c.BatchQueue.Order = bqOrder
		// A new order brings its backfill default unless the flag says.
		c.BatchQueue.Backfill = bqOrder == "fair" || bqOrder == "priority" || bqOrder == "multifactor"
	}
	if bqBackfill.set {
		c.BatchQueue.Backfill = bqBackfill.value
	}
	if isSet(fs, "batch-queue-concurrent-placements") {
		if bqConcurrent < 1 {
			fmt.Fprintf(s.Stderr, "Invalid -batch-queue-concurrent-placements %d: must be at least 1\n", bqConcurrent)
			return 1
		}
		c.BatchQueue.ConcurrentPlacements = bqConcurrent
	}
	// Only the flags given change; the server checks the values and names
	// the field it refuses (a negative weight, a zero duration with its
	// weight set).
	from, into := &c0.BatchQueue.Multifactor, &c.BatchQueue.Multifactor
	for name, w := range map[string][2]*float64{
		"batch-queue-priority-weight":   {&from.PriorityWeight, &into.PriorityWeight},
		"batch-queue-age-weight":        {&from.AgeWeight, &into.AgeWeight},
		"batch-queue-fair-share-weight": {&from.FairShareWeight, &into.FairShareWeight},
		"batch-queue-size-weight":       {&from.SizeWeight, &into.SizeWeight},
	} {
		if isSet(fs, name) {
			*w[1] = *w[0]
		}
	}
	if isSet(fs, "batch-queue-max-age") {
		into.MaxAge = from.MaxAge
	}
	if isSet(fs, "batch-queue-usage-half-life") {
		into.UsageHalfLife = from.UsageHalfLife
	}
	if bqTimeout != "" {
		d, err := time.ParseDuration(bqTimeout)
		if err != nil || d <= 0 {
			fmt.Fprintf(s.Stderr, "Invalid -batch-queue-workload-timeout %q: must be a duration above 0 such as \"5m\"\n", bqTimeout)
			return 1
		}
		c.BatchQueue.WorkloadTimeout = d
	}
	endpoint := "/v1/operator/scheduler/configuration"
	if isSet(fs, "check-index") {
		endpoint += "?cas=" + strconv.FormatUint(checkIndex, 10)
	}
	var out schedulerSetConfigResponse
	if _, err := client.Raw().Write(endpoint, &c, &out, nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error setting scheduler configuration: %s\n", err)
		return 1
	}
	if !out.Updated {
		fmt.Fprintln(s.Stdout, "Scheduler configuration could not be atomically updated, please try again")
		return 1
	}
	fmt.Fprintln(s.Stdout, "Scheduler configuration updated!")
	return 0
}

var _ flag.Value = (*boolFlag)(nil)
