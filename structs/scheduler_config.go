package structs

import (
	"fmt"
	"time"
)

// Scheduler algorithms.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// Batch queue orders.
const (
	BatchQueueOrderFIFO     = "fifo"
	BatchQueueOrderPriority = "priority"
	// BatchQueueOrderFair releases the head of the namespace with the
	// smallest weighted share of the cluster; within a namespace entries
	// keep priority order.
	BatchQueueOrderFair = "fair"
)

// Batch queue defaults.
const (
	DefaultBatchQueueConcurrentPlacements = 1
	DefaultBatchQueueWorkloadTimeout      = 5 * time.Minute
)

// SchedulerConfiguration is the cluster-wide, Raft-replicated scheduler
// configuration.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool

	// NodeLimitForFeasibilityChecks is how many feasible nodes a
	// placement of a group with affinities or spreads scores; zero takes
	// the default.
	NodeLimitForFeasibilityChecks uint

	// BatchQueue configures the leader's batch job queue.
	BatchQueue BatchQueueConfig

	CreateIndex uint64
	ModifyIndex uint64
}

// PreemptionConfig says which job types may preempt lower priority work.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// BatchQueueConfig configures the batch job queue.
type BatchQueueConfig struct {
	Enabled              bool
	Order                string
	ConcurrentPlacements int
	WorkloadTimeout      time.Duration

	// Backfill lets a workload with a max_run_duration that ends before
	// the reserved start of a head waiting for capacity run ahead of it.
	// Writers that leave it unset take DefaultBatchQueueBackfill.
	Backfill bool
}

// DefaultBatchQueueBackfill is the backfill setting when a write leaves
// it out: on for the fair and priority orders, off for fifo, whose users
// asked for strict submission order.
func DefaultBatchQueueBackfill(order string) bool {
	return order == BatchQueueOrderFair || order == BatchQueueOrderPriority
}

// DefaultSchedulerConfiguration returns the configuration a new cluster
// starts with.
func DefaultSchedulerConfiguration() *SchedulerConfiguration {
	c := &SchedulerConfiguration{
		SchedulerAlgorithm: SchedulerAlgorithmBinpack,
		PreemptionConfig:   PreemptionConfig{SystemSchedulerEnabled: true},
	}
	c.BatchQueue.Canonicalize()
	c.BatchQueue.Backfill = DefaultBatchQueueBackfill(c.BatchQueue.Order)
	return c
}

// Canonicalize fills zero values with defaults.
func (b *BatchQueueConfig) Canonicalize() {
	if b.Order == "" {
		b.Order = BatchQueueOrderFIFO
	}
	if b.ConcurrentPlacements == 0 {
		b.ConcurrentPlacements = DefaultBatchQueueConcurrentPlacements
	}
	if b.WorkloadTimeout == 0 {
		b.WorkloadTimeout = DefaultBatchQueueWorkloadTimeout
	}
}

// Validate checks the batch queue settings and names the offending field.
func (b *BatchQueueConfig) Validate() error {
	var errs MultiError
	switch b.Order {
	case BatchQueueOrderFIFO, BatchQueueOrderPriority, BatchQueueOrderFair:
	default:
		errs.Add(fmt.Errorf("BatchQueue.Order %q is not allowed: must be %q, %q or %q", b.Order, BatchQueueOrderFIFO, BatchQueueOrderPriority, BatchQueueOrderFair))
	}
	if b.ConcurrentPlacements < 1 {
		errs.Add(fmt.Errorf("BatchQueue.ConcurrentPlacements %d is not allowed: must be at least 1", b.ConcurrentPlacements))
	}
	if b.WorkloadTimeout <= 0 {
		errs.Add(fmt.Errorf("BatchQueue.WorkloadTimeout %s is not allowed: must be more than 0", b.WorkloadTimeout))
	}
	return errs.ErrorOrNil()
}

// Validate checks the whole configuration.
func (c *SchedulerConfiguration) Validate() error {
	var errs MultiError
	switch c.SchedulerAlgorithm {
	case "", SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread:
	default:
		errs.Add(fmt.Errorf("SchedulerAlgorithm %q is not allowed: must be %q or %q", c.SchedulerAlgorithm, SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread))
	}
	errs.Add(c.BatchQueue.Validate())
	return errs.ErrorOrNil()
}
