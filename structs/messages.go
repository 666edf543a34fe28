package structs

import "fmt"

// MessageType identifies a Raft log entry. The numbers follow Nomad's so
// that logs read the same; gaps are types we do not implement yet.
type MessageType uint8

// Raft message types.
const (
	NodeRegisterRequestType                 MessageType = 0
	NodeDeregisterRequestType               MessageType = 1
	NodeUpdateStatusRequestType             MessageType = 2
	NodeUpdateDrainRequestType              MessageType = 3
	JobRegisterRequestType                  MessageType = 4
	JobDeregisterRequestType                MessageType = 5
	EvalUpdateRequestType                   MessageType = 6
	EvalDeleteRequestType                   MessageType = 7
	AllocUpdateRequestType                  MessageType = 8
	AllocClientUpdateRequestType            MessageType = 9
	ReconcileJobSummariesRequestType        MessageType = 10
	ApplyPlanResultsRequestType             MessageType = 13
	JobBatchDeregisterRequestType           MessageType = 26
	AllocUpdateDesiredTransitionRequestType MessageType = 27
	NodeUpdateEligibilityRequestType        MessageType = 28
	BatchNodeUpdateDrainRequestType         MessageType = 29
	SchedulerConfigRequestType              MessageType = 30
	NodeBatchDeregisterRequestType          MessageType = 31
)

// IgnoreUnknownTypeFlag marks a message that an older server may skip
// instead of failing on it.
const IgnoreUnknownTypeFlag MessageType = 128

var messageTypeNames = map[MessageType]string{
	NodeRegisterRequestType:                 "NodeRegisterRequestType",
	NodeDeregisterRequestType:               "NodeDeregisterRequestType",
	NodeUpdateStatusRequestType:             "NodeUpdateStatusRequestType",
	NodeUpdateDrainRequestType:              "NodeUpdateDrainRequestType",
	JobRegisterRequestType:                  "JobRegisterRequestType",
	JobDeregisterRequestType:                "JobDeregisterRequestType",
	EvalUpdateRequestType:                   "EvalUpdateRequestType",
	EvalDeleteRequestType:                   "EvalDeleteRequestType",
	AllocUpdateRequestType:                  "AllocUpdateRequestType",
	AllocClientUpdateRequestType:            "AllocClientUpdateRequestType",
	ReconcileJobSummariesRequestType:        "ReconcileJobSummariesRequestType",
	ApplyPlanResultsRequestType:             "ApplyPlanResultsRequestType",
	JobBatchDeregisterRequestType:           "JobBatchDeregisterRequestType",
	AllocUpdateDesiredTransitionRequestType: "AllocUpdateDesiredTransitionRequestType",
	NodeUpdateEligibilityRequestType:        "NodeUpdateEligibilityRequestType",
	BatchNodeUpdateDrainRequestType:         "BatchNodeUpdateDrainRequestType",
	SchedulerConfigRequestType:              "SchedulerConfigRequestType",
	NodeBatchDeregisterRequestType:          "NodeBatchDeregisterRequestType",
	NodePoolUpsertRequestType:               "NodePoolUpsertRequestType",
	NodePoolDeleteRequestType:               "NodePoolDeleteRequestType",
	NamespaceUpsertRequestType:              "NamespaceUpsertRequestType",
	NamespaceDeleteRequestType:              "NamespaceDeleteRequestType",
	ACLAuthMethodsUpsertRequestType:         "ACLAuthMethodsUpsertRequestType",
	ACLAuthMethodsDeleteRequestType:         "ACLAuthMethodsDeleteRequestType",
	ACLBindingRulesUpsertRequestType:        "ACLBindingRulesUpsertRequestType",
	ACLBindingRulesDeleteRequestType:        "ACLBindingRulesDeleteRequestType",
}

// String returns Nomad's name of the message type.
func (t MessageType) String() string {
	if n, ok := messageTypeNames[t&^IgnoreUnknownTypeFlag]; ok {
		return n
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

// WriteRequest carries the common fields of every write.
type WriteRequest struct {
	Region           string
	Namespace        string
	AuthToken        string
	IdempotencyToken string
}

// QueryOptions carries the common fields of every read, including the
// blocking-query parameters.
type QueryOptions struct {
	Region        string
	Namespace     string
	MinQueryIndex uint64
	MaxQueryTime  int64 // nanoseconds
	AllowStale    bool
	Prefix        string
	Filter        string
	PerPage       int32
	NextToken     string
	Reverse       bool
	AuthToken     string
}

// QueryMeta is returned with every read.
type QueryMeta struct {
	Index       uint64
	LastContact int64 // nanoseconds
	KnownLeader bool
	NextToken   string
}

// WriteMeta is returned with every write.
type WriteMeta struct {
	Index uint64
}

// AllocUpdateDesiredTransitionRequest sets server-side transitions on
// allocations (merged onto what they have) and writes the evals that act
// on them, in one Raft entry.
type AllocUpdateDesiredTransitionRequest struct {
	Allocs map[string]*DesiredTransition
	Evals  []*Evaluation
	WriteRequest
}

// NodeRegisterRequest registers or updates a node.
type NodeRegisterRequest struct {
	Node      *Node
	NodeEvent *NodeEvent
	WriteRequest
}

// NodeDeregisterRequest removes nodes.
type NodeDeregisterRequest struct {
	NodeIDs []string
	WriteRequest
}

// NodeUpdateStatusRequest changes a node's status, with the evals that the
// change creates written in the same entry.
type NodeUpdateStatusRequest struct {
	NodeID    string
	Status    string
	NodeEvent *NodeEvent
	UpdatedAt int64
	Evals     []*Evaluation
	WriteRequest
}

// NodeUpdateEligibilityRequest changes a node's scheduling eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
	NodeEvent   *NodeEvent
	UpdatedAt   int64
	Evals       []*Evaluation
	WriteRequest
}

// JobRegisterRequest registers a job and, in the same Raft entry, its
// evaluation.
type JobRegisterRequest struct {
	Job  *Job
	Eval *Evaluation

	// Submission is the source the job was written in, kept with the
	// version this registration creates.
	Submission *JobSubmission

	// EnforceIndex makes the register fail unless the job's current
	// JobModifyIndex equals JobModifyIndex (0: the job must not exist).
	EnforceIndex   bool
	JobModifyIndex uint64
	EvalPriority   int

	// PreserveCounts keeps the count of every group the job already
	// has; PreserveResources keeps the resources of every task it
	// already has.
	PreserveCounts    bool
	PreserveResources bool

	WriteRequest
}

// JobDeregisterRequest stops (or purges) a job and writes its eval.
type JobDeregisterRequest struct {
	JobID string
	Purge bool
	Eval  *Evaluation

	// NoShutdownDelay stops the job's allocations without their group
	// and task shutdown_delay (job stop -no-shutdown-delay).
	NoShutdownDelay bool

	// EvalPriority, when not zero, is the priority of the eval instead
	// of the job's.
	EvalPriority int
	WriteRequest
}

// EvalUpdateRequest upserts evaluations.
type EvalUpdateRequest struct {
	Evals     []*Evaluation
	EvalToken string
	WriteRequest
}

// EvalDeleteRequest deletes evaluations and allocations (garbage collection).
type EvalDeleteRequest struct {
	Evals  []string
	Allocs []string
	WriteRequest
}

// AllocUpdateRequest carries client status updates of allocations, and the
// evals they cause (for example reschedules).
type AllocUpdateRequest struct {
	Alloc []*Allocation
	Evals []*Evaluation
	WriteRequest
}

// ApplyPlanResultsRequest commits a plan: allocations to place or update,
// allocations to stop, and the eval changes of the scheduler.
type ApplyPlanResultsRequest struct {
	AllocsUpdated []*Allocation
	AllocsStopped []*Allocation
	Job           *Job
	EvalID        string

	// Evals are written with the plan (for example the scheduler's
	// blocked follow-up eval) so that they commit atomically.
	Evals []*Evaluation
	WriteRequest
}

// SchedulerSetConfigRequest replaces the scheduler configuration, with an
// optional check-and-set on its ModifyIndex.
type SchedulerSetConfigRequest struct {
	Config SchedulerConfiguration
	CAS    bool
	WriteRequest
}
