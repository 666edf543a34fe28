package structs

import (
	"maps"
	"slices"
	"time"
)

// Evaluation statuses.
const (
	EvalStatusBlocked   = "blocked"
	EvalStatusPending   = "pending"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// Evaluation triggers.
const (
	EvalTriggerJobRegister          = "job-register"
	EvalTriggerJobDeregister        = "job-deregister"
	EvalTriggerPeriodicJob          = "periodic-job"
	EvalTriggerNodeDrain            = "node-drain"
	EvalTriggerNodeUpdate           = "node-update"
	EvalTriggerAllocStop            = "alloc-stop"
	EvalTriggerScheduled            = "scheduled"
	EvalTriggerRollingUpdate        = "rolling-update"
	EvalTriggerDeploymentWatcher    = "deployment-watcher"
	EvalTriggerFailedFollowUp       = "failed-follow-up"
	EvalTriggerMaxPlans             = "max-plan-attempts"
	EvalTriggerRetryFailedAlloc     = "alloc-failure"
	EvalTriggerQueuedAllocs         = "queued-allocs"
	EvalTriggerPreemption           = "preemption"
	EvalTriggerScaling              = "job-scaling"
	EvalTriggerMaxDisconnectTimeout = "max-disconnect-timeout"
	EvalTriggerReconnect            = "reconnect"
	EvalTriggerAllocReschedule      = "alloc-reschedule"
)

// Core job names, evaluated by the server's own scheduler.
const (
	CoreJobEvalGC  = "eval-gc"
	CoreJobNodeGC  = "node-gc"
	CoreJobJobGC   = "job-gc"
	CoreJobForceGC = "force-gc"
)

// Evaluation is a request for the scheduler to reconcile one job.
type Evaluation struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	JobModifyIndex    uint64
	NodeID            string
	NodeModifyIndex   uint64
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string

	// FailedTGAllocs records, per task group, why placements failed.
	FailedTGAllocs map[string]*AllocMetric

	ClassEligibility     map[string]bool
	EscapedComputedClass bool
	AnnotatePlan         bool

	// QueuedAllocations is the number of unplaced allocations per group.
	QueuedAllocations map[string]int

	// SnapshotIndex is the state index the scheduler worked from.
	SnapshotIndex uint64

	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
}

// GetNamespace is the namespace the evaluation lives in ("" for nil).
func (e *Evaluation) GetNamespace() string {
	if e == nil {
		return ""
	}
	return e.Namespace
}

// TerminalStatus reports whether the evaluation will not be processed again.
func (e *Evaluation) TerminalStatus() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// Copy returns a deep copy of the evaluation.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	c := *e
	if e.FailedTGAllocs != nil {
		c.FailedTGAllocs = make(map[string]*AllocMetric, len(e.FailedTGAllocs))
		for k, m := range e.FailedTGAllocs {
			c.FailedTGAllocs[k] = m.Copy()
		}
	}
	c.ClassEligibility = maps.Clone(e.ClassEligibility)
	c.QueuedAllocations = maps.Clone(e.QueuedAllocations)
	return &c
}

// AllocMetric explains a placement: how many nodes were looked at, why
// they were filtered or exhausted, and how the chosen ones scored.
type AllocMetric struct {
	NodesEvaluated     int
	NodesFiltered      int
	NodesInPool        int
	NodePool           string
	NodesAvailable     map[string]int
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string
	Scores             map[string]float64
	ScoreMetaData      []*NodeScoreMeta
	AllocationTime     time.Duration
	CoalescedFailures  int

	// Infeasible is true when the group cannot be placed on any node
	// whatever the current usage (constraints, drivers, datacenters, node
	// pool, or resources larger than any node's total), as opposed to
	// waiting for capacity. The batch queue uses it to free its slot.
	Infeasible bool

	// InfeasibleReason says why Infeasible is set.
	InfeasibleReason string
}

// Copy returns a deep copy of the metric.
func (m *AllocMetric) Copy() *AllocMetric {
	if m == nil {
		return nil
	}
	c := *m
	c.NodesAvailable = maps.Clone(m.NodesAvailable)
	c.ClassFiltered = maps.Clone(m.ClassFiltered)
	c.ConstraintFiltered = maps.Clone(m.ConstraintFiltered)
	c.ClassExhausted = maps.Clone(m.ClassExhausted)
	c.DimensionExhausted = maps.Clone(m.DimensionExhausted)
	c.Scores = maps.Clone(m.Scores)
	c.QuotaExhausted = append([]string(nil), m.QuotaExhausted...)
	if m.ScoreMetaData != nil {
		c.ScoreMetaData = make([]*NodeScoreMeta, len(m.ScoreMetaData))
		for i, s := range m.ScoreMetaData {
			sc := *s
			sc.Scores = slices.Clone(s.Scores)
			c.ScoreMetaData[i] = &sc
		}
	}
	return &c
}

// NodeScoreMeta is the scoring of one node for one placement.
type NodeScoreMeta struct {
	NodeID    string
	Scores    NodeScores
	NormScore float64
}
