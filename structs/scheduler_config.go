package structs

import (
	"fmt"
	"math"
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
	// BatchQueueOrderMultifactor releases the entry with the highest
	// effective priority: the weighted sum of its priority, age,
	// namespace fair share of decayed usage and job size factors.
	BatchQueueOrderMultifactor = "multifactor"
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

	// Multifactor weighs the factors of the multifactor order. Writers
	// that leave the whole block out take DefaultBatchQueueMultifactor;
	// a weight left out of a given block is 0 (its factor does not count).
	Multifactor BatchQueueMultifactor
}

// BatchQueueMultifactor is the weights of the multifactor order's
// factors, each factor in [0, 1], and the two durations they scale by.
type BatchQueueMultifactor struct {
	PriorityWeight  float64
	AgeWeight       float64
	FairShareWeight float64
	SizeWeight      float64
	// MaxAge is the wait at which the age factor reaches 1.
	MaxAge time.Duration
	// UsageHalfLife is how long a namespace's past usage takes to count
	// half as much in its fair-share factor.
	UsageHalfLife time.Duration
}

// Default multifactor settings, as Slurm's priority/multifactor defaults
// for the two durations (seven days).
const (
	DefaultBatchQueueMaxAge        = 7 * 24 * time.Hour
	DefaultBatchQueueUsageHalfLife = 7 * 24 * time.Hour
)

// DefaultBatchQueueMultifactor is the multifactor block a writer that
// leaves it out gets: priority, age and fair share count alike, job size
// not at all.
func DefaultBatchQueueMultifactor() BatchQueueMultifactor {
	return BatchQueueMultifactor{
		PriorityWeight:  1000,
		AgeWeight:       1000,
		FairShareWeight: 1000,
		MaxAge:          DefaultBatchQueueMaxAge,
		UsageHalfLife:   DefaultBatchQueueUsageHalfLife,
	}
}

// Validate checks the multifactor settings and names the offending
// field. With multifactor the queue's order, at least one weight must be
// above 0.
func (m *BatchQueueMultifactor) Validate(multifactor bool) error {
	var errs MultiError
	weights := []struct {
		name string
		v    float64
	}{
		{"PriorityWeight", m.PriorityWeight}, {"AgeWeight", m.AgeWeight},
		{"FairShareWeight", m.FairShareWeight}, {"SizeWeight", m.SizeWeight},
	}
	weighted := false
	for _, w := range weights {
		if w.v < 0 || math.IsNaN(w.v) || math.IsInf(w.v, 0) {
			errs.Add(fmt.Errorf("BatchQueue.Multifactor.%s %v is not allowed: must be a number of at least 0", w.name, w.v))
		} else if w.v > 0 {
			weighted = true
		}
	}
	if m.AgeWeight > 0 && m.MaxAge <= 0 {
		errs.Add(fmt.Errorf("BatchQueue.Multifactor.MaxAge %s is not allowed: must be more than 0 when AgeWeight is set", m.MaxAge))
	}
	if m.FairShareWeight > 0 && m.UsageHalfLife <= 0 {
		errs.Add(fmt.Errorf("BatchQueue.Multifactor.UsageHalfLife %s is not allowed: must be more than 0 when FairShareWeight is set", m.UsageHalfLife))
	}
	if multifactor && !weighted && errs.ErrorOrNil() == nil {
		errs.Add(fmt.Errorf("BatchQueue.Multifactor weights are all 0, which is not allowed with order %q: set at least one of PriorityWeight, AgeWeight, FairShareWeight and SizeWeight above 0", BatchQueueOrderMultifactor))
	}
	return errs.ErrorOrNil()
}

// DefaultBatchQueueBackfill is the backfill setting when a write leaves
// it out: on for the fair and priority orders, off for fifo, whose users
// asked for strict submission order.
func DefaultBatchQueueBackfill(order string) bool {
	return order == BatchQueueOrderFair || order == BatchQueueOrderPriority || order == BatchQueueOrderMultifactor
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
	c.BatchQueue.Multifactor = DefaultBatchQueueMultifactor()
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
	case BatchQueueOrderFIFO, BatchQueueOrderPriority, BatchQueueOrderFair, BatchQueueOrderMultifactor:
	default:
		errs.Add(fmt.Errorf("BatchQueue.Order %q is not allowed: must be %q, %q, %q or %q", b.Order, BatchQueueOrderFIFO, BatchQueueOrderPriority, BatchQueueOrderFair, BatchQueueOrderMultifactor))
	}
	errs.Add(b.Multifactor.Validate(b.Order == BatchQueueOrderMultifactor))
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
