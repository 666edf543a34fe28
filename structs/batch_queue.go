package structs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Raft message types of the batch job queue. They use numbers Nomad does
// not, so that a Nomad log never collides with them.
const (
	// BatchQueueReleaseRequestType records one round of the leader's
	// queue decisions: placed workloads leave the queue and queued ones
	// are released to the eval broker, in one Raft entry. (101 was a
	// separate removal message before the two were merged; it stays
	// unused.)
	BatchQueueReleaseRequestType MessageType = 100

	// BatchQueueUsageResetRequestType records an operator's reset of a
	// namespace's decayed usage.
	BatchQueueUsageResetRequestType MessageType = 103
)

func init() {
	messageTypeNames[BatchQueueReleaseRequestType] = "BatchQueueReleaseRequestType"
	messageTypeNames[BatchQueueUsageResetRequestType] = "BatchQueueUsageResetRequestType"
}

// Batch queue entry statuses, as the listing shows them.
const (
	BatchQueueStatusQueued      = "queued"
	BatchQueueStatusPlacing     = "placing"
	BatchQueueStatusStalled     = "stalled"
	BatchQueueStatusConstrained = "constrained"
)

// BatchQueueEntry is a row of the Raft-replicated batch queue table: one
// job waiting in, or released from, the queue. The sort key (Priority,
// EnqueueIndex, EnqueueTime) is fixed by the job's first enqueue;
// re-registering a queued job replaces EvalID only. The row is kept to 80
// bytes (the release record sits behind a pointer) because one exists
// per queued job.
type BatchQueueEntry struct {
	Namespace string
	JobID     string
	EvalID    string

	Priority     int
	EnqueueIndex uint64
	EnqueueTime  int64 // unix nanoseconds

	// Release is nil until the leader releases the workload to the eval
	// broker.
	Release *BatchQueueRelease
}

// BatchQueueRelease is the Raft-stored release record of an entry.
type BatchQueueRelease struct {
	Index uint64
	Time  int64 // unix nanoseconds

	// JobVersion is the job version when released: its allocations count
	// as placement.
	JobVersion uint64
}

// Released reports whether the entry was handed to the eval broker.
func (e *BatchQueueEntry) Released() bool { return e.Release != nil }

// ReleaseIndex is the Raft index of the release, 0 while queued.
func (e *BatchQueueEntry) ReleaseIndex() uint64 {
	if e.Release == nil {
		return 0
	}
	return e.Release.Index
}

// ReleaseTime is the time of the release, 0 while queued.
func (e *BatchQueueEntry) ReleaseTime() int64 {
	if e.Release == nil {
		return 0
	}
	return e.Release.Time
}

// Copy returns a copy of the entry.
func (e *BatchQueueEntry) Copy() *BatchQueueEntry {
	if e == nil {
		return nil
	}
	c := *e
	if e.Release != nil {
		r := *e.Release
		c.Release = &r
	}
	return &c
}

// BatchQueueReleaseRequest is one round of the leader's decisions. Done
// entries were placed and leave the queue table; Release entries are
// released at ReleaseTime (unix nanoseconds). The FSM skips an entry that
// no longer holds the named eval, and a release of an entry released
// already, so no decision is applied twice.
type BatchQueueReleaseRequest struct {
	Done        []BatchQueueRef
	Release     []BatchQueueRef
	ReleaseTime int64
	WriteRequest
}

// BatchQueueRef names one entry by job and eval.
type BatchQueueRef struct {
	Namespace string
	JobID     string
	EvalID    string
}

// BatchQueueListEntry is one row of GET /v1/queue/jobs.
type BatchQueueListEntry struct {
	Position    int
	Namespace   string
	JobID       string
	EvalID      string
	Priority    int
	Status      string
	EnqueueTime int64
	ReleaseTime int64

	// Reason is why the entry waits or where it stands, as a bare code
	// clients can switch on: Priority, Line, FairShare, NamespaceLimit,
	// Resources, Held, Placing, Backfill, Stalled or Constrained.
	// ReasonDetail says the same in words for a human.
	Reason       string
	ReasonDetail string

	// EstimatedStart is when the queue expects the workload to start
	// (unix nanoseconds), from the max_run_duration deadlines of the
	// running allocs; 0 when unknown.
	EstimatedStart int64

	// EffectivePriority is a queued entry's rank in the multifactor
	// order, the sum of Factors; 0 and nil in the other orders.
	EffectivePriority float64
	Factors           *BatchQueueFactors
}

// BatchQueueFactors are the weighted factors of a queued entry's
// effective priority in the multifactor order: each factor, in [0, 1],
// times its weight.
type BatchQueueFactors struct {
	Priority  float64
	Age       float64
	FairShare float64
	JobSize   float64
}

// Sum is the effective priority the factors make.
func (f BatchQueueFactors) Sum() float64 { return f.Priority + f.Age + f.FairShare + f.JobSize }

// BatchQueueListRequest reads the queue listing. With JobID set it reads
// that one job's entry (in QueryOptions.Namespace), which the leader finds
// without sorting the line.
type BatchQueueListRequest struct {
	JobID string
	QueryOptions
}

// BatchQueueListResponse is the queue listing in release order.
type BatchQueueListResponse struct {
	Entries []*BatchQueueListEntry
	// Tokens are the entries' page tokens (one each, in order): strings
	// that sort like the listing and name a place in it that stays put
	// as the queue moves, for per_page/next_token.
	Tokens []string
	QueryMeta
}

// BatchQueueStatus is the body of GET /v1/queue.
type BatchQueueStatus struct {
	Config  BatchQueueConfig
	Depth   map[string]int
	Placing []*BatchQueueListEntry
}

// BatchQueueStatusResponse answers a queue status read.
type BatchQueueStatusResponse struct {
	Status BatchQueueStatus
	QueryMeta
}

// Namespace meta keys the batch queue reads. They live in the
// namespace's free-form meta so that `nomad namespace apply`, the
// official client and the API set them without new fields.
const (
	// MetaBatchQueueWeight is a namespace's fair-share weight (a positive
	// number, default 1).
	MetaBatchQueueWeight = "batch_queue_weight"
	// MetaBatchQueueMaxRunning caps the namespace's live batch allocs
	// (a positive integer; absent: no cap).
	MetaBatchQueueMaxRunning = "batch_queue_max_running"
	// MetaBatchQueueMaxPlacing caps the namespace's workloads placing at
	// once (a positive integer; absent: no cap).
	MetaBatchQueueMaxPlacing = "batch_queue_max_placing"
)

// BatchQueueShare is a namespace's fair-share settings.
type BatchQueueShare struct {
	Weight     float64
	MaxRunning int // 0: no cap
	MaxPlacing int // 0: no cap
}

// BatchQueueShareOf reads a namespace's fair-share settings from its
// meta, and names the key, the value and what is allowed when one is
// malformed.
func BatchQueueShareOf(meta map[string]string) (BatchQueueShare, error) {
	s := BatchQueueShare{Weight: 1}
	var errs MultiError
	if v, ok := meta[MetaBatchQueueWeight]; ok {
		w, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || w <= 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			errs.Add(fmt.Errorf("meta %s %q is not allowed: must be a number greater than 0", MetaBatchQueueWeight, v))
		} else {
			s.Weight = w
		}
	}
	capOf := func(key string, dst *int) {
		v, ok := meta[key]
		if !ok {
			return
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			errs.Add(fmt.Errorf("meta %s %q is not allowed: must be a whole number of at least 1", key, v))
			return
		}
		*dst = n
	}
	capOf(MetaBatchQueueMaxRunning, &s.MaxRunning)
	capOf(MetaBatchQueueMaxPlacing, &s.MaxPlacing)
	return s, errs.ErrorOrNil()
}

// BatchQueueUsageReset is a row of the Raft-replicated usage table, one
// per namespace: a namespace's batch alloc runs before Time do not count
// in its decayed usage (0 when never reset), and Folded is the usage of
// its allocs the garbage collector deleted. A reset replaces the row, so
// it clears Folded too.
type BatchQueueUsageReset struct {
	Namespace   string
	Time        int64 // unix nanoseconds
	Folded      BatchQueueFoldedUsage
	ModifyIndex uint64
}

// BatchQueueUsageResetRequest resets the decayed usage of the request's
// namespace. The leader stamps Time before the entry goes through Raft,
// so every server applies the same reset.
type BatchQueueUsageResetRequest struct {
	Time int64 // unix nanoseconds
	WriteRequest
}

// BatchQueueUsageResetResponse answers a usage reset.
type BatchQueueUsageResetResponse struct {
	WriteMeta
}

// BatchQueueUsageRequest reads the namespaces' decayed usage.
type BatchQueueUsageRequest struct {
	QueryOptions
}

// BatchQueueNamespaceUsage is one namespace's row of GET /v1/queue/usage,
// as the multifactor order's fair-share factor sees it.
type BatchQueueNamespaceUsage struct {
	Namespace string
	// Weight is the namespace's batch_queue_weight.
	Weight float64
	// Usage is its batch allocs' dominant share of the cluster times the
	// seconds they ran, each second decayed by UsageHalfLife.
	Usage float64
	// NormalizedUsage is its part of all namespaces' usage, 0 to 1.
	NormalizedUsage float64
	// NormalizedShare is its part of all namespaces' weights, 0 to 1.
	NormalizedShare float64
	// FairShare is 2^(-NormalizedUsage/NormalizedShare).
	FairShare float64
	// ResetTime is when an operator last reset its usage (unix
	// nanoseconds), 0 when never.
	ResetTime int64
}

// BatchQueueUsageResponse lists the namespaces' usage, by name.
type BatchQueueUsageResponse struct {
	Usage []*BatchQueueNamespaceUsage
	QueryMeta
}
