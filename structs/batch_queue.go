package structs

// Raft message types of the batch job queue. They use numbers Nomad does
// not, so that a Nomad log never collides with them.
const (
	// BatchQueueReleaseRequestType records one round of the leader's
	// queue decisions: placed workloads leave the queue and queued ones
	// are released to the eval broker, in one Raft entry. (101 was a
	// separate removal message before the two were merged; it stays
	// unused.)
	BatchQueueReleaseRequestType MessageType = 100
)

func init() {
	messageTypeNames[BatchQueueReleaseRequestType] = "BatchQueueReleaseRequestType"
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
	Reason      string
	EnqueueTime int64
	ReleaseTime int64
}

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
