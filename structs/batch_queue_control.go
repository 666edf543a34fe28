package structs

// BatchQueueControlRequestType records an operator's hold, release or
// top of a queued job.
const BatchQueueControlRequestType MessageType = 102

func init() {
	messageTypeNames[BatchQueueControlRequestType] = "BatchQueueControlRequestType"
}

// Operator controls of a queued job.
const (
	// BatchQueueHold keeps the entry's place but skips it.
	BatchQueueHold = "hold"
	// BatchQueueUnhold lets a held entry go again (`queue release`).
	BatchQueueUnhold = "release"
	// BatchQueueTop moves the entry to the head of its namespace.
	BatchQueueTop = "top"
)

// BatchQueueControl is a row of the Raft-replicated control table: an
// operator's hold or top of one queued entry. It lives beside the entry
// (not in it) so that the entries of a deep queue stay small; it names
// the entry's EnqueueIndex, so a row left behind by an entry that has
// since gone does not apply to the job's next entry.
type BatchQueueControl struct {
	Namespace    string
	JobID        string
	EnqueueIndex uint64

	Held bool
	// Top is the Raft index of the newest top; 0 when not topped. The
	// newest top goes first.
	Top uint64
}

// BatchQueueControlRequest holds, releases or tops a queued job.
type BatchQueueControlRequest struct {
	JobID string
	Op    string
	WriteRequest
}

// BatchQueueControlResponse answers a control request.
type BatchQueueControlResponse struct {
	WriteMeta
}
